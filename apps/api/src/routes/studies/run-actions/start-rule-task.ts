import { assertStudyPermission } from "@studyflow/domain/access";
import { createQueuedRuleTask, type QueuedRuleTask, type TaskRow } from "@studyflow/domain/tasks";
import { queueTask } from "@studyflow/queue";
import type { ManagementPrincipal } from "../../../auth/principals";
import type { AppDeps } from "../../../deps";
import { validatedRules } from "./case-rules";

/**
 * Starts a rule-running task of the study as both bulk routes do (run-actions on participants,
 * previous responses): `run-study-action` checked, the rules validated (400 naming the JSON path),
 * the task recorded and queued under its kind.
 */
export async function startRuleTask(
  deps: AppDeps,
  who: ManagementPrincipal,
  studyKey: string,
  rules: unknown[],
  task: (validRules: unknown[]) => QueuedRuleTask,
): Promise<TaskRow> {
  await assertStudyPermission(deps.database.db, who, studyKey, "run-study-action");
  const queued = task(validatedRules(rules));
  return createQueuedRuleTask(
    deps.database.db,
    { studyKey, createdBy: who.subject },
    queued,
    (taskId) => queueTask(deps.taskQueue, { id: taskId, kind: queued.kind }),
    deps,
  );
}
