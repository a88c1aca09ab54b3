import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerDeleteUser } from "./delete-user";

/** The signed-in participant's account under /v1/user (scaffold: filled by the user work). */
export function createUserRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerDeleteUser(router, deps, limiter);
  return router;
}

/** POST /v1/unsubscribe-newsletter: a mailed token, no sign-in (scaffold). */
export function createNewsletterRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  void deps;
  void limiter;
  return router;
}
