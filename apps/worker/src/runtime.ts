import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { expireTemporaryParticipants } from "@studyflow/domain";
import { RUN_ACTIONS_QUEUE } from "@studyflow/queue";
import { createWorkerMetrics, type WorkerMetrics } from "./metrics";
import { startOutboxDispatcher } from "./outbox/outbox-dispatcher";
import { createSmtpMailer } from "./outbox/smtp-mailer";
import { createRunActionsProcessor, failTaskOfFailedJob } from "./processors/run-actions";
import { SWEEP_INTERVAL_MS, sweepStaleTasks } from "./processors/stale-task-sweeper";

/**
 * Lock duration: a job's lock is renewed every lockDuration/2 while it runs. A chunk commits a
 * batch every ~50 ms, so 30 s only expires when the process is gone or frozen; then BullMQ's
 * stall check (every 15 s) hands the job to another worker, which resumes at the checkpoint.
 */
export const LOCK_DURATION_MS = 30_000;
export const STALLED_INTERVAL_MS = 15_000;
/** A job that stalls this often is failed (and its task with it) rather than retried forever. */
export const MAX_STALLED_COUNT = 5;
/** A week: far beyond the day within which a temporary participant can still be merged. */
const DEFAULT_TEMP_RETENTION_SECONDS = 7 * 86_400;

export interface WorkerRuntimeDeps {
  database: DbHandle;
  /** Connection for the BullMQ Worker (blocking commands: maxRetriesPerRequest null). */
  connection: Redis;
  /** Connection for producing chunk jobs. */
  producerConnection: Redis;
  prefix: string;
  concurrency: number;
  resultDir: string;
  logger: Logger;
  clock?: () => number;
  batchSize?: number;
  chunkSize?: number;
  /** Set false in tests that drive the sweeper themselves. */
  sweep?: boolean;
  /** Age after which temporary participants are removed; see TEMP_PARTICIPANT_RETENTION_SECONDS. */
  temporaryParticipantRetentionSeconds?: number;
  /** Overrides of the lock timings, for tests that kill workers and cannot wait 45 s. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** E-mail delivery of the outbox; without it, messages stay pending for a worker that has it. */
  mail?: { smtpUrl: string; from: string; pollIntervalMs: number };
}

export interface WorkerRuntime {
  worker: Worker;
  queue: Queue;
  /** This runtime's registry, for GET /metrics on the health/admin port. */
  metrics: WorkerMetrics;
  /** Stops taking jobs; running chunks stop after their batch in flight, bounded by `timeoutMs`. */
  close: (timeoutMs: number) => Promise<"closed" | "timed-out">;
}

export function startWorkerRuntime(deps: WorkerRuntimeDeps): WorkerRuntime {
  let closing = false;
  const queue = new Queue(RUN_ACTIONS_QUEUE, { connection: deps.producerConnection, prefix: deps.prefix });
  const metrics = createWorkerMetrics({ database: deps.database, queues: [queue], logger: deps.logger });
  const processor = createRunActionsProcessor({
    database: deps.database,
    queue,
    resultDir: deps.resultDir,
    logger: deps.logger,
    isClosing: () => closing,
    onParticipantsProcessed: (count) => metrics.participantsProcessed.inc(count),
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.batchSize ? { batchSize: deps.batchSize } : {}),
    ...(deps.chunkSize ? { chunkSize: deps.chunkSize } : {}),
  });
  const worker = new Worker(RUN_ACTIONS_QUEUE, processor, {
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: deps.concurrency,
    lockDuration: deps.lockDurationMs ?? LOCK_DURATION_MS,
    stalledInterval: deps.stalledIntervalMs ?? STALLED_INTERVAL_MS,
    maxStalledCount: MAX_STALLED_COUNT,
  });
  worker.on("failed", (job, error) => {
    failTaskOfFailedJob(deps, job, error).catch((failure: unknown) =>
      deps.logger.error({ err: failure, jobId: job?.id }, "could not mark the task of a failed job"),
    );
  });
  worker.on("error", (error) => deps.logger.error({ err: error }, "worker error"));

  const clock = deps.clock ?? Date.now;
  const retentionSeconds = deps.temporaryParticipantRetentionSeconds ?? DEFAULT_TEMP_RETENTION_SECONDS;
  // Housekeeping once a minute: tasks whose jobs were lost, and temporary participants past retention.
  const sweeper =
    deps.sweep === false
      ? undefined
      : setInterval(() => {
          sweepStaleTasks({ database: deps.database, queue, logger: deps.logger }).catch((error: unknown) =>
            deps.logger.warn({ err: error }, "stale-task sweep failed"),
          );
          expireTemporaryParticipants(deps.database.db, Math.floor(clock() / 1000) - retentionSeconds)
            .then((removed) => {
              if (removed > 0) deps.logger.info({ removed }, "expired temporary participants removed");
            })
            .catch((error: unknown) => deps.logger.warn({ err: error }, "temporary-participant expiry failed"));
        }, SWEEP_INTERVAL_MS);
  sweeper?.unref();

  const outbox = deps.mail
    ? startOutboxDispatcher({
        db: deps.database.db,
        mailer: createSmtpMailer({ smtpUrl: deps.mail.smtpUrl, from: deps.mail.from }),
        logger: deps.logger,
        pollIntervalMs: deps.mail.pollIntervalMs,
        ...(deps.clock ? { clock: deps.clock } : {}),
      })
    : undefined;

  return {
    worker,
    queue,
    metrics,
    close: async (timeoutMs) => {
      closing = true;
      clearInterval(sweeper);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"timed-out">((resolve) => {
        timer = setTimeout(() => resolve("timed-out"), timeoutMs);
      });
      try {
        const stopped = Promise.all([worker.close(), outbox?.close()]).then(() => "closed" as const);
        return await Promise.race([stopped, deadline]);
      } finally {
        clearTimeout(timer);
        await queue.close();
      }
    },
  };
}
