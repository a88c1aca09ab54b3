import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerGetTimer } from "./get-timer";
import { registerListTicks } from "./list-ticks";
import { registerUpdateTimer } from "./update-timer";

/** The study timer: its schedule, pause and resume; mounted below the studies router, whose auth covers it. */
export function createTimerRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerGetTimer(router, deps);
  registerUpdateTimer(router, deps);
  registerListTicks(router, deps);
  return router;
}
