import type { AppDeps } from "../../../deps";
import { registerCancelTask } from "./cancel-task";
import { registerCreateTask } from "./create-task";
import { registerGetTask } from "./get-task";
import { registerGetTaskResult } from "./get-task-result";
import { registerListTasks } from "./list-tasks";
import { registerPreviousResponsesForParticipant } from "./previous-responses-participant";
import { registerGetPreviousResponsesTask } from "./get-previous-responses-task";
import { registerGetPreviousResponsesTaskResult } from "./get-previous-responses-task-result";
import { registerStartPreviousResponsesTask } from "./start-previous-responses-task";
import { registerRunOnParticipant } from "./run-on-participant";
import { registerTaskEvents } from "./task-events";
import { registerValidateRules } from "./validate-rules";
import { createRouter } from "../../create-router";

/** Rule actions run on a study's participants as background tasks, and those tasks. */
export function createRunActionsRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  registerCreateTask(router, deps);
  registerValidateRules(router, deps);
  registerListTasks(router, deps);
  registerGetTask(router, deps);
  registerGetTaskResult(router, deps);
  registerCancelTask(router, deps);
  registerTaskEvents(router, deps);
  registerRunOnParticipant(router, deps);
  registerStartPreviousResponsesTask(router, deps);
  registerGetPreviousResponsesTask(router, deps);
  registerGetPreviousResponsesTaskResult(router, deps);
  registerPreviousResponsesForParticipant(router, deps);
  return router;
}
