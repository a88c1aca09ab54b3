import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Database } from "@studyflow/db";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getVisibleTask } from "@studyflow/domain/tasks";
import { managementOf, type AppEnv } from "../../../app-env";
import { keyString } from "../../schemas";

/** Where a task lives, below the router's mount point; its operations add their own last segment. */
export const TASK_PATH = "/participants/task/{taskID}";

export const taskParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } }),
  taskID: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "taskID", in: "path" } }),
});

/**
 * The checks every task route makes: `run-study-action` on the study of the URL, then the caller
 * may see the task (its creator or an admin, and the task belongs to that study).
 */
export async function visibleTaskOf(c: Context<AppEnv>, db: Database, params: z.infer<typeof taskParams>) {
  const who = managementOf(c);
  await assertStudyPermission(db, who, params.studyKey, "run-study-action");
  return { who, task: await getVisibleTask(db, params.studyKey, params.taskID, who) };
}
