import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { registerPasswordResetInfos } from "./password-reset-infos";
import { registerInitiatePasswordReset } from "./initiate-password-reset";
import { registerResetPassword } from "./reset-password";
import { createRouter } from "../create-router";

/**
 * The public password-reset endpoints: request a link by e-mail, then set a new password with it.
 * The limiter shares the app's clock, so tests that move time move token expiry and rate-limit
 * windows together.
 */
export function createPasswordResetRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  registerInitiatePasswordReset(router, deps, limiter);
  registerPasswordResetInfos(router, deps, limiter);
  registerResetPassword(router, deps, limiter);
  return router;
}
