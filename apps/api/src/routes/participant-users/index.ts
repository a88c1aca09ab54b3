import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";

/** Operators' view of participant accounts (scaffold). */
export function createParticipantUsersRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  void deps;
  void limiter;
  return router;
}
