import type { AppDeps } from "../../../deps";
import { registerGetTimer } from "./get-timer";
import { registerListTicks } from "./list-ticks";
import { registerUpdateTimer } from "./update-timer";
import { createRouter } from "../../create-router";

/** The study timer: its schedule, pause and resume; mounted below the studies router, whose auth covers it. */
export function createTimerRouter(deps: AppDeps) {
  const router = createRouter();
  registerGetTimer(router, deps);
  registerUpdateTimer(router, deps);
  registerListTicks(router, deps);
  return router;
}
