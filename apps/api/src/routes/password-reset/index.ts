import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Database } from "@studyflow/db";
import type { RateLimiter } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import type { ApiConfig } from "../../config";
import type { AppDeps } from "../../deps";
import { registerInitiatePasswordReset } from "./initiate";
import { registerResetPassword } from "./reset";
import { registerResetPage } from "./reset-page";

/** What both operations share, built once per app. */
export interface PasswordResetContext {
  db: Database;
  limiter: RateLimiter;
  now: () => Date;
  config: Pick<ApiConfig, "RESET_TOKEN_TTL_SECONDS" | "RESET_PASSWORD_URL">;
}

/**
 * The public password-reset endpoints: request a link by e-mail, then set a new password with it
 * (and the page the link opens). The limiter shares the app's clock, so tests that move time move
 * token expiry and rate-limit windows together.
 */
export function registerPasswordReset(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const clock = deps.clock ?? Date.now;
  const context: PasswordResetContext = {
    db: deps.database.db,
    limiter,
    now: () => new Date(clock()),
    config: deps.config,
  };
  registerInitiatePasswordReset(router, context);
  registerResetPassword(router, context);
  registerResetPage(router);
}
