import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";

/** DELETE /v1/user (scaffold: filled by the account-deletion work). */
export function registerDeleteUser(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  void router;
  void deps;
  void limiter;
}
