import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { LEGACY_TASKS_QUEUE, TASKS_QUEUE, taskJobOptions, taskJobId, taskJobName, type TaskJob } from "./task-jobs";

/**
 * The queue every task kind runs on (run-actions, timer ticks, exports): one chunk pipeline in the
 * worker serves them all, so they share one queue.
 */
export function createTaskQueue(connection: Redis, prefix: string): Queue {
  return new Queue(TASKS_QUEUE, { connection, prefix });
}

/**
 * Queues a recorded task's job. Every producer (API routes, the CLI, the timer, the sweeper, the
 * daily exports) goes through here, so the job's name, id and retry options live in one place;
 * jobId = taskId makes a second call for the same task a no-op.
 */
export async function queueTask(queue: Queue, task: { id: string; kind: string }): Promise<void> {
  const job: TaskJob = { kind: "task", taskId: task.id };
  await queue.add(taskJobName(task.kind), job, { ...taskJobOptions, jobId: taskJobId(task.id) });
}

/** Jobs read from the legacy queue at a time. */
const LEGACY_PAGE = 500;
/** The delayed set's score is the due time in milliseconds times this, plus a counter. */
const DELAYED_SCORE_FACTOR = 0x1000;

/**
 * Moves the jobs an earlier release left waiting on LEGACY_TASKS_QUEUE onto `target`: the same
 * id, name, data and options, a delayed job still due when it was (its attempts start afresh),
 * then the old job is removed. A job that a worker of the earlier release holds (active) stays
 * with it; one it takes between the copy and the removal runs twice, which planning (chunk jobs
 * by deterministic id) and chunks (resumed from their checkpoint under a lock) allow. Returns how
 * many jobs moved.
 */
export async function moveLegacyTaskJobs(connection: Redis, prefix: string, target: Queue): Promise<number> {
  const legacy = new Queue(LEGACY_TASKS_QUEUE, { connection, prefix });
  try {
    let moved = 0;
    for (;;) {
      const jobs = await legacy.getJobs(["waiting", "delayed", "prioritized"], 0, LEGACY_PAGE - 1, true);
      let movedNow = 0;
      for (const job of jobs) {
        if (job.id === undefined) continue;
        const score = await connection.zscore(legacy.toKey("delayed"), job.id);
        const dueAt = score === null ? 0 : Math.floor(Number(score) / DELAYED_SCORE_FACTOR);
        // BullMQ counts a delay from its own reading of the real time, so the remainder is too.
        await target.add(job.name, job.data, { ...job.opts, jobId: job.id, delay: Math.max(0, dueAt - Date.now()) });
        const removed = await job.remove().then(
          () => true,
          () => false,
        );
        if (removed) movedNow += 1;
      }
      moved += movedNow;
      // A page of jobs none of which could be removed (all taken meanwhile) would come back forever.
      if (jobs.length < LEGACY_PAGE || movedNow === 0) return moved;
    }
  } finally {
    await legacy.close();
  }
}
