import { createHash } from "node:crypto";
import type { z } from "zod";
import { normalizeEmail } from "@studyflow/domain";
import { addressKeys } from "../../client-address";
import { failureRateLimits, rateLimit, type RateLimitOptions, type RateLimiter } from "../../rate-limit";

/** Hashed, so Redis holds no addresses; the same for every address, registered or not. */
export const emailKey = (email: string) => createHash("sha256").update(normalizeEmail(email), "utf8").digest("hex");

/**
 * Growing delays as tiers of one sliding-window limit each: the first failures pass at once, then
 * a client waits for the shortest window to drain (a minute), then a quarter of an hour, then an
 * hour. Failures only count (401), so a person who types the password right is never slowed.
 * Per account (the e-mail, whether or not it has an account, so the limit tells nothing) and per
 * client address; both answer 429 with Retry-After.
 */
const PER_ACCOUNT_TIERS = [
  { limit: 5, windowSeconds: 60 },
  { limit: 10, windowSeconds: 15 * 60 },
  { limit: 20, windowSeconds: 60 * 60 },
] as const;
/** Wider: several people share an address (a household, a clinic's network). */
const PER_ADDRESS_TIERS = [
  { limit: 20, windowSeconds: 60 },
  { limit: 50, windowSeconds: 15 * 60 },
  { limit: 100, windowSeconds: 60 * 60 },
] as const;

export const SIGN_IN_LIMIT_MESSAGE = "too many failed sign-in attempts; try again later";

/**
 * Failed sign-ins (401) limited per account and per address, in growing tiers. Put after
 * caseJsonBody's middleware: the body is JSON by then, and `accountOf` gets it validated. One
 * middleware for all six tiers: one Redis round trip before the sign-in, one after a failed one.
 */
export function signInFailureLimits<Json extends z.ZodType>(
  limiter: RateLimiter,
  name: string,
  json: Json,
  accountOf: (body: z.output<Json>) => string,
) {
  const address = PER_ADDRESS_TIERS.map((tier): RateLimitOptions<z.ZodType> => ({
    name: `${name}:address:${tier.windowSeconds}`,
    ...tier,
    count: { failures: [401] },
    message: SIGN_IN_LIMIT_MESSAGE,
    keys: (c) => addressKeys(c),
  }));
  const account = PER_ACCOUNT_TIERS.map((tier): RateLimitOptions<z.ZodType> => ({
    name: `${name}:account:${tier.windowSeconds}`,
    ...tier,
    count: { failures: [401] },
    message: SIGN_IN_LIMIT_MESSAGE,
    input: { json },
    keys: (_c, body) => [accountOf(body as z.output<Json>)],
  }));
  return [failureRateLimits(limiter, [...address, ...account])];
}

/** A plain per-address limit on every request (sign-up, renewals). */
export function perAddress(limiter: RateLimiter, name: string, limit: number, windowSeconds: number, message: string) {
  return rateLimit(limiter, {
    name,
    limit,
    windowSeconds,
    count: "every-request",
    message,
    keys: (c) => addressKeys(c),
  });
}
