import { z } from "zod";

/** Queue of bulk run-actions work: one parent job per task, one child job per key-range chunk. */
export const RUN_ACTIONS_QUEUE = "run-actions";

export const runActionsJobSchema = z.discriminatedUnion("kind", [
  /** Plans the task: counts, splits into chunks, then finalises once every chunk is done. */
  z.object({ kind: z.literal("task"), taskId: z.uuid() }),
  /** Processes one key range of a task, resuming from its committed checkpoint. */
  z.object({ kind: z.literal("chunk"), taskId: z.uuid(), chunkIndex: z.number().int().min(0) }),
]);
export type RunActionsJob = z.infer<typeof runActionsJobSchema>;

/**
 * The name of a task job on the queue: what the dashboard lists. The processor reads only the
 * payload; timer ticks and exports are named apart so that they stand out among researchers' runs.
 */
export const taskJobName = (kind: string) =>
  kind === "timer" ? "timer-tick" : kind.startsWith("export-") ? kind : RUN_ACTIONS_QUEUE;

/** jobId = taskId makes a second enqueue of the same task a no-op in BullMQ. */
export const taskJobId = (taskId: string) => taskId;
export const chunkJobId = (taskId: string, chunkIndex: number) => `${taskId}-chunk-${chunkIndex}`;

export const runActionsJobOptions = {
  // A failure that is not a per-participant rule error (database or Redis trouble) is retried;
  // five attempts with backoff ride out a database restart of about a minute.
  attempts: 5,
  backoff: { type: "exponential", delay: 2_000 },
  // Finished jobs are not needed: the Task row in Postgres is the record of truth.
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600 },
} as const;
