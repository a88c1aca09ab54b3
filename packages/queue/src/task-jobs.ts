import { z } from "zod";

/**
 * The queue every task kind runs on (run-actions, timer ticks, exports): one job per task, which
 * plans it, and one job per key-range chunk.
 */
export const TASKS_QUEUE = "tasks";

/**
 * The tasks queue's name before it was named for tasks. Jobs a deployment left waiting there are
 * moved onto TASKS_QUEUE when a worker starts (moveLegacyTaskJobs); nothing consumes it otherwise.
 */
export const LEGACY_TASKS_QUEUE = "run-actions";

export const taskJobSchema = z.discriminatedUnion("kind", [
  /** Plans the task: counts, splits into chunks, then finalises once every chunk is done. */
  z.object({ kind: z.literal("task"), taskId: z.uuid() }),
  /** Processes one key range of a task, resuming from its committed checkpoint. */
  z.object({ kind: z.literal("chunk"), taskId: z.uuid(), chunkIndex: z.number().int().min(0) }),
]);
export type TaskJob = z.infer<typeof taskJobSchema>;

/**
 * The name of a task job on the queue: what the dashboard lists. The processor reads only the
 * payload; timer ticks and exports are named apart so that they stand out among researchers' runs.
 */
export const taskJobName = (kind: string) =>
  kind === "timer" ? "timer-tick" : kind.startsWith("export-") ? kind : "run-actions";

/** The name of every chunk job on the dashboard, whatever the task's kind. */
export const TASK_CHUNK_JOB_NAME = "task-chunk";

/** jobId = taskId makes a second enqueue of the same task a no-op in BullMQ. */
export const taskJobId = (taskId: string) => taskId;
export const chunkJobId = (taskId: string, chunkIndex: number) => `${taskId}-chunk-${chunkIndex}`;

export const taskJobOptions = {
  // A failure that is not a per-participant rule error (database or Redis trouble) is retried;
  // five attempts with backoff ride out a database restart of about a minute.
  attempts: 5,
  backoff: { type: "exponential", delay: 2_000 },
  // Finished jobs are not needed: the Task row in Postgres is the record of truth.
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600 },
} as const;
