import { eq, sql } from "drizzle-orm";
import { tasks, type Transaction } from "@studyflow/db";
import type { TaskRow } from "../tasks/task-row";

/**
 * The task's row, locked FOR UPDATE in the caller's transaction: what planning and finalisation
 * each start with. A prepared statement, so one round trip once a connection has it (both run
 * serially, before the first chunk and after the last).
 */
export async function lockedTaskRow(tx: Transaction, taskId: string): Promise<TaskRow | undefined> {
  const [task] = await tx
    .select()
    .from(tasks)
    .where(eq(tasks.id, sql.placeholder("taskId")))
    .for("update")
    .prepare("locked_task_row")
    .execute({ taskId });
  return task;
}
