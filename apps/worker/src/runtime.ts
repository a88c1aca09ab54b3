import { Worker, type Processor } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { RUN_ACTIONS_QUEUE } from "@studyflow/queue";

export interface WorkerRuntimeOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  processor: Processor;
  logger: Logger;
}

/**
 * Lock duration: a job's lock is renewed every lockDuration/2 while it runs. A chunk commits a
 * batch every ~50 ms, so 30 s only expires when the process is gone or frozen; then BullMQ's
 * stall check (every 15 s) hands the job to another worker, which resumes at the checkpoint.
 */
export const LOCK_DURATION_MS = 30_000;
export const STALLED_INTERVAL_MS = 15_000;
/** A job that stalls this often is failed rather than retried forever. */
export const MAX_STALLED_COUNT = 5;

export function startWorker(options: WorkerRuntimeOptions): Worker {
  const worker = new Worker(RUN_ACTIONS_QUEUE, options.processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: LOCK_DURATION_MS,
    stalledInterval: STALLED_INTERVAL_MS,
    maxStalledCount: MAX_STALLED_COUNT,
  });
  worker.on("failed", (job, error) => {
    options.logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: error }, "job attempt failed");
  });
  worker.on("error", (error) => {
    options.logger.error({ err: error }, "worker error");
  });
  return worker;
}

/** Closes the worker, waiting for running jobs at most `timeoutMs`; unfinished ones resume elsewhere. */
export async function closeWithin(worker: Worker, timeoutMs: number): Promise<"closed" | "timed-out"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timed-out">((resolve) => {
    timer = setTimeout(() => resolve("timed-out"), timeoutMs);
  });
  try {
    return await Promise.race([worker.close().then(() => "closed" as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
