import type { Queue } from "bullmq";
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Logger } from "pino";
import { taskChunks, tasks, type DbHandle } from "@studyflow/db";
import { failTask } from "@studyflow/domain/task-pipeline";
import { chunkJobId, queueTask, taskJobId } from "@studyflow/queue";

/**
 * A task untouched this long is checked against the queue. Running chunks touch their task every
 * batch (~50 ms), and BullMQ's stall detection re-queues a dead worker's job within 30 s, so five
 * minutes of silence means nothing is working on it.
 */
export const STALE_AFTER_MS = 5 * 60_000;
/** Two sweeps never overlap (a slow one and the next scheduled one): the second skips its turn. */
const SWEEP_LOCK_ID = 7_420_031_002;

const LIVE_STATES = new Set(["active", "waiting", "delayed", "prioritized", "waiting-children"]);

/**
 * Finds tasks that claim to be queued or running but have no live job: a queued task whose job
 * never reached Redis (the API died between commit and enqueue) is queued again; a running one
 * whose jobs are all gone is failed with a readable reason.
 */
export async function sweepStaleTasks(deps: {
  database: DbHandle;
  queue: Queue;
  logger: Logger;
  clock: () => number;
  staleAfterMs?: number;
}): Promise<{ requeued: string[]; failed: string[] }> {
  const { clock } = deps;
  const outcome = { requeued: [] as string[], failed: [] as string[] };
  await deps.database.db.transaction(async (tx) => {
    // Transaction-scoped, so the lock is released with the pooled connection's transaction.
    const [lock] = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${SWEEP_LOCK_ID}) as locked`,
    );
    if (!lock?.locked) return;
    const cutoff = new Date(clock() - (deps.staleAfterMs ?? STALE_AFTER_MS));
    const stale = await tx
      .select({ id: tasks.id, kind: tasks.kind, status: tasks.status })
      .from(tasks)
      .where(and(inArray(tasks.status, ["queued", "in_progress"]), lt(tasks.updatedAt, cutoff)))
      .limit(100);
    for (const task of stale) {
      const jobIds = [taskJobId(task.id)];
      const chunks = await tx
        .select({ chunkIndex: taskChunks.chunkIndex })
        .from(taskChunks)
        .where(and(eq(taskChunks.taskId, task.id), eq(taskChunks.status, "pending")));
      jobIds.push(...chunks.map((chunk) => chunkJobId(task.id, chunk.chunkIndex)));
      const states = await Promise.all(
        jobIds.map(async (id) => (await deps.queue.getJob(id))?.getState() ?? "missing"),
      );
      if (states.some((state) => LIVE_STATES.has(state))) continue;
      if (task.status === "queued") {
        await deps.queue.remove(taskJobId(task.id));
        await queueTask(deps.queue, task);
        await tx
          .update(tasks)
          .set({ updatedAt: new Date(clock()) })
          .where(eq(tasks.id, task.id));
        outcome.requeued.push(task.id);
      } else {
        await failTask(
          deps.database.db,
          task.id,
          "the task's jobs were lost: no worker holds or waits for them",
          clock,
        );
        outcome.failed.push(task.id);
      }
    }
  });
  if (outcome.requeued.length + outcome.failed.length > 0) deps.logger.warn(outcome, "stale tasks handled");
  return outcome;
}
