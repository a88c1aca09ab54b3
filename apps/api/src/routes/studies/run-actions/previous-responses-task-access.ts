import type { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { getVisibleTask, type TaskRow } from "@studyflow/domain/tasks";
import type { Context } from "hono";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { taskParams } from "./visible-task";

/** The task kind the previous-responses routes start and follow; a task of another kind is not theirs. */
export const PREVIOUS_RESPONSES_KIND = "run-actions-previous-responses" as const;

/** A previous-responses task of the URL's study the caller may see (its creator or an admin); other kinds are 404. */
export async function previousResponsesTaskOf(
  c: Context<AppEnv>,
  deps: AppDeps,
  params: z.infer<typeof taskParams>,
): Promise<TaskRow> {
  const who = managementOf(c);
  await assertStudyPermission(deps.database.db, who, params.studyKey, "run-study-action");
  const task = await getVisibleTask(deps.database.db, params.studyKey, params.taskID, who);
  if (task.kind !== PREVIOUS_RESPONSES_KIND) throw new NotFound(`task "${params.taskID}" not found`);
  return task;
}
