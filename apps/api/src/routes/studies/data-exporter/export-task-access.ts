import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Database } from "@studyflow/db";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Forbidden, NotFound } from "@studyflow/domain/errors";
import { getVisibleTask, type TaskRow } from "@studyflow/domain/tasks";
import { managementOf, type AppEnv } from "../../../app-env";
import { keyString } from "../../schemas";
import type { ExportGroup } from "./export-groups";

export const exportTaskParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } }),
  taskID: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "taskID", in: "path" }, example: "0b9c6d0e-5c43-4a53-9d0a-2f1b4c3e8a71" }),
});

/**
 * The checks of every export-task route: the group's permission on the study of the URL (or the
 * permission of a kind the group also follows, see ExportGroup.alsoFollows); a task of that study
 * and of the group's kind or one it follows (anything else, another study's export included, is
 * 404 — case-backend finds tasks across the whole instance); the permission its kind needs; then,
 * as case-backend rules, only its creator or an admin may see it (403).
 */
export async function exportTaskOf(
  c: Context<AppEnv>,
  db: Database,
  group: ExportGroup,
  params: z.infer<typeof exportTaskParams>,
): Promise<TaskRow> {
  const who = managementOf(c);
  const followed = group.alsoFollows ?? {};
  await assertStudyPermission(db, who, params.studyKey, [group.permission, ...Object.values(followed)]);
  // Looked up as an admin would, so that the kind decides 404 before ownership decides 403.
  const task = await getVisibleTask(db, params.studyKey, params.taskID, { subject: who.subject, isAdmin: true });
  const permission = task.kind === group.kind ? group.permission : followed[task.kind];
  if (!permission) throw new NotFound(`task "${params.taskID}" not found`);
  await assertStudyPermission(db, who, params.studyKey, permission);
  if (!who.isAdmin && task.createdBy !== who.subject) {
    throw new Forbidden("only the task's creator or an admin may see it");
  }
  return task;
}
