import { addressKeys } from "../client-address";
import { rateLimit, type RateLimiter } from "../rate-limit";

/**
 * Failed requests (401) per client address on the routes that take a token from a mailed link
 * (temp-token info and sign-in, verify-email, password-reset infos): 20 per quarter hour, shared
 * by the people behind one address, each limit in its own bucket (`name`).
 */
const FAILURES_PER_ADDRESS = 20;
const FAILURES_WINDOW_SECONDS = 15 * 60;

export function limitMailedTokenFailures(limiter: RateLimiter, name: string, message: string) {
  return rateLimit(limiter, {
    name,
    limit: FAILURES_PER_ADDRESS,
    windowSeconds: FAILURES_WINDOW_SECONDS,
    count: { failures: [401] },
    message,
    keys: (c) => addressKeys(c),
  });
}
