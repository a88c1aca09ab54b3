import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerGetTaskRetention } from "./get-task-retention";
import { registerSetTaskRetention } from "./set-task-retention";

/** How long a study's finished tasks are kept; mounted below the studies router, whose auth covers it. */
export function createTaskRetentionRouter(deps: AppDeps) {
  const router = createRouter();
  registerGetTaskRetention(router, deps);
  registerSetTaskRetention(router, deps);
  return router;
}
