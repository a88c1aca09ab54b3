import { and, eq, inArray } from "drizzle-orm";
import { taskChunks, tasks, type Database } from "@studyflow/db";
import { isTimerTask, taskRuleSet } from "../tasks/task-rules";
import { MAX_REPORTED_ERRORS } from "./bulk-tuning";
import { writeResultFile, type RunActionsResult } from "./result-store";

/**
 * Completes the task if every chunk is done. Called by whoever finishes a chunk: the row lock on
 * the task serialises the callers, so exactly one of them sees all chunks done and finalises.
 */
export async function finalizeIfComplete(
  db: Database,
  taskId: string,
  resultDir: string,
  clock: () => number,
): Promise<"completed" | "pending" | "ended"> {
  return db.transaction(async (tx) => {
    const [task] = await tx.select().from(tasks).where(eq(tasks.id, taskId)).for("update");
    if (!task || task.status !== "in_progress") return "ended";
    const chunks = await tx
      .select()
      .from(taskChunks)
      .where(eq(taskChunks.taskId, taskId))
      .orderBy(taskChunks.chunkIndex);
    if (chunks.length === 0 || chunks.some((chunk) => chunk.status !== "done")) return "pending";

    const ruleSet = await taskRuleSet(tx, task);
    const ruleCount = ruleSet.rules.length;
    const changed = new Array<number>(ruleCount).fill(0);
    for (const chunk of chunks) {
      chunk.changedPerRule.forEach((count, index) => {
        if (index < ruleCount) changed[index] = (changed[index] ?? 0) + count;
      });
    }
    const finishedAt = new Date(clock());
    const result: RunActionsResult = {
      participantCount: chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0),
      participantStateChangedPerRule: changed,
      errorCount: chunks.reduce((sum, chunk) => sum + chunk.errorCount, 0),
      errors: chunks.flatMap((chunk) => chunk.errors).slice(0, MAX_REPORTED_ERRORS),
      durationMs: Math.max(0, finishedAt.getTime() - (task.startedAt ?? task.createdAt).getTime()),
      dryRun: ruleSet.dryRun,
      ...(isTimerTask(task) ? { tick: { dueAt: task.input.dueAt, rulesVersion: task.input.rulesVersion } } : {}),
    };
    const resultFile = await writeResultFile(resultDir, task.studyKey, task.id, result);
    await tx
      .update(tasks)
      .set({
        status: "completed",
        processedCount: result.participantCount,
        resultFile,
        updatedAt: finishedAt,
        finishedAt,
      })
      .where(eq(tasks.id, taskId));
    return "completed";
  });
}

/** Ends a task that cannot finish, with a message a person can act on. */
export async function failTask(db: Database, taskId: string, message: string, clock: () => number = Date.now) {
  const now = new Date(clock());
  await db
    .update(tasks)
    .set({ status: "failed", error: message.slice(0, 2_000), updatedAt: now, finishedAt: now })
    .where(and(eq(tasks.id, taskId), inArray(tasks.status, ["queued", "in_progress"])));
}
