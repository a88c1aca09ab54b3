/** The clock a domain operation runs on, from its caller: tests and bulk batches stop it. */
export interface ClockContext {
  /** Milliseconds since the epoch. */
  clock: () => number;
}

/**
 * The system's clock. Only a composition root (the API's deps, the worker's runtime, the CLI's
 * context) makes it, once, and hands it down: nothing below reads the time on its own, so a test
 * that stops the clock stops it everywhere.
 */
export const systemClock: () => number = () => Date.now();

export const nowSeconds = (ctx: ClockContext) => Math.floor(ctx.clock() / 1000);
