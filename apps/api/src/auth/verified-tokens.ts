import type { JWTPayload } from "jose";

/**
 * Tokens whose signature and claims passed verification, kept by their exact text: a client sends
 * the same token with every request, and checking its signature was the costliest step of
 * authenticating it. Expiry is still checked on every use, against the request's clock and with
 * the verification's tolerance; revocations and token versions are checked per request as before,
 * outside this cache. Bounded: the entry kept longest goes first.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, JWTPayload>();

  constructor(
    private readonly clockToleranceSeconds: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The payload of a token verified before and not expired at `nowSeconds`. */
  get(token: string, nowSeconds: number): JWTPayload | undefined {
    const payload = this.entries.get(token);
    if (payload === undefined) return undefined;
    // as jose's verification decides it: expired once exp <= now - tolerance
    if (typeof payload.exp === "number" && payload.exp <= nowSeconds - this.clockToleranceSeconds) {
      this.entries.delete(token);
      return undefined;
    }
    return payload;
  }

  remember(token: string, payload: JWTPayload): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, payload);
  }
}
