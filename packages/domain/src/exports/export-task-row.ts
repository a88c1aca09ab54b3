import { tasks, type Executor } from "@studyflow/db";
import type { TaskRow } from "../tasks/task-row";

/** What an export's task row holds when it is recorded; the rest starts as the table's defaults. */
export type ExportTaskValues = Required<
  Pick<typeof tasks.$inferInsert, "studyKey" | "kind" | "input" | "createdBy" | "targetCount" | "fileType">
>;

/** Records an export task as queued, on the caller's executor (the transaction that counted its rows). */
export async function insertExportTask(tx: Executor, values: ExportTaskValues): Promise<TaskRow> {
  const [row] = await tx
    .insert(tasks)
    .values({ ...values, status: "queued" })
    .returning();
  if (!row) throw new Error("task insert returned nothing");
  return row;
}
