import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";

/** The study timer: its schedule, pause and resume; mounted below the studies router, whose auth covers it. */
export function createTimerRouter(_deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  return router;
}
