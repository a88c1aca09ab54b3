import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";

/** case-backend's participant sign-in routes under /v1/auth (scaffold: filled by the auth work). */
export function createParticipantAuthRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  void deps;
  void limiter;
  return router;
}
