import type { Context } from "hono";
import { participantOf, type AppEnv } from "../../app-env";
import { rateLimit, type RateLimiter } from "../../rate-limit";

/**
 * Wrong current passwords per account, counted together on every route that asks for it (change
 * password, change address): a stolen access token must not become an oracle for the password.
 * 5 wrong guesses per 15 minutes is plenty for a person who mistyped, and keeps an online guesser
 * at 480 guesses a day; the sign-in route's own limits apply there.
 */
const WRONG_PASSWORDS_PER_WINDOW = 5;
const WRONG_PASSWORD_WINDOW_SECONDS = 15 * 60;

export function limitWrongPasswords(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "account-password",
    limit: WRONG_PASSWORDS_PER_WINDOW,
    windowSeconds: WRONG_PASSWORD_WINDOW_SECONDS,
    keys: (c: Context<AppEnv>) => [`user:${participantOf(c).userId}`],
    count: { failures: [401] },
    message: "too many wrong passwords; try again later",
  });
}
