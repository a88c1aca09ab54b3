import { and, eq, inArray, sql } from "drizzle-orm";
import { rawClientOf, taskChunks, tasks, type Database } from "@studyflow/db";
import type { FileStore } from "../files/file-store";
import { createPostgresFileStore } from "../files/postgres-file-store";
import { lockedTaskRow } from "./locked-task-row";
import { taskKindOf } from "./task-kinds";

/**
 * Completes the task if every chunk is done, with its kind's result (task-kinds.ts). Called by
 * whoever finishes a chunk: the row lock on the task serialises the callers, so exactly one of
 * them sees all chunks done and finalises.
 *
 * A caller whose chunk is not the last one learns it from one statement, without the transaction:
 * every caller looks after its own chunk committed, so the caller of the chunk that committed
 * last sees every chunk done and goes on to the locked finalisation.
 */
export async function finalizeIfComplete(
  db: Database,
  taskId: string,
  resultDir: string,
  clock: () => number,
  files: FileStore = createPostgresFileStore(db),
): Promise<"completed" | "pending" | "ended"> {
  const [open] = await rawClientOf(db)<{ status: string | null; pending: boolean }[]>`
    select (select status from tasks where id = ${taskId}) as status,
      exists (select 1 from task_chunks where task_id = ${taskId} and status <> 'done') as pending`;
  if (open?.status !== "in_progress") return "ended";
  if (open.pending) return "pending";
  // prepared statements (one round trip each once a connection has them): this is the serial end
  // of every task, after its last chunk
  return db.transaction(async (tx) => {
    const task = await lockedTaskRow(tx, taskId);
    if (!task || task.status !== "in_progress") return "ended";
    const chunks = await tx
      .select()
      .from(taskChunks)
      .where(eq(taskChunks.taskId, sql.placeholder("taskId")))
      .orderBy(taskChunks.chunkIndex)
      .prepare("finalize_task_chunks")
      .execute({ taskId });
    if (chunks.length === 0 || chunks.some((chunk) => chunk.status !== "done")) return "pending";

    const finalized = await taskKindOf(task.kind).finalize(tx, task, chunks, { resultDir, clock, files });
    const finishedAt = new Date(clock());
    await tx
      .update(tasks)
      .set({
        status: "completed",
        processedCount: finalized.processedCount,
        resultFile: finalized.resultFile,
        ...(finalized.fileType ? { fileType: finalized.fileType } : {}),
        updatedAt: finishedAt,
        finishedAt,
      })
      .where(eq(tasks.id, taskId))
      .prepare("finalize_task_complete")
      .execute();
    return "completed";
  });
}

/** Ends a task that cannot finish, with a message a person can act on. */
export async function failTask(db: Database, taskId: string, message: string, clock: () => number) {
  const now = new Date(clock());
  await db
    .update(tasks)
    .set({ status: "failed", error: message.slice(0, 2_000), updatedAt: now, finishedAt: now })
    .where(and(eq(tasks.id, taskId), inArray(tasks.status, ["queued", "in_progress"])));
}
