import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";

/** Researchers subscribed to the study's notifications; mounted below the studies router, whose auth covers it. */
export function createSubscriptionsRouter(_deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  return router;
}
