/** The clock a domain operation runs on, from its caller: tests and bulk batches stop it. */
export interface ClockContext {
  /** Milliseconds since the epoch. */
  clock: () => number;
}

export const nowSeconds = (ctx: ClockContext) => Math.floor(ctx.clock() / 1000);
