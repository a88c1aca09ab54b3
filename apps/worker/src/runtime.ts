import { Queue, Worker, type Processor } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { type ExportRetention } from "@studyflow/domain/exports";
import { createFileStore, type FileStoreConfig } from "@studyflow/domain/files";
import {
  ACCOUNT_LIFECYCLE_STEPS,
  lifecycleStepEnabled,
  type AccountLifecycleSettings,
} from "@studyflow/domain/participant-accounts";
import { type ExternalServiceCaller } from "@studyflow/domain/rules";
import { type TaskRetentionDefaults, TASK_RETENTION_DEFAULTS } from "@studyflow/domain/tasks";
import {
  ACCOUNT_DELETION_QUEUE,
  ACCOUNT_LIFECYCLE_QUEUE,
  MAINTENANCE_QUEUE,
  LEGACY_TASKS_QUEUE,
  OUTBOX_QUEUE,
  TASKS_QUEUE,
  TIMER_QUEUE,
  moveLegacyTaskJobs,
} from "@studyflow/queue";
import { createWorkerMetrics, type WorkerMetrics } from "./metrics";
import { createOutboxProcessor } from "./outbox/outbox-delivery";
import { createSmtpMailer } from "./outbox/smtp-mailer";
import { createAccountDeletionProcessor } from "./processors/account-deletion";
import { createAccountLifecycleProcessor } from "./processors/account-lifecycle";
import { syncAccountLifecycleSchedules } from "./schedules/account-lifecycle";
import { createMaintenanceProcessor } from "./processors/maintenance";
import { createTaskProcessor, failTaskOfFailedJob } from "./processors/tasks";
import { createStudyTimerProcessor } from "./processors/study-timer";
import {
  ACCOUNT_DELETION_SCHEDULES,
  MAINTENANCE_SCHEDULES,
  outboxSchedule,
  studyTimerSchedule,
} from "./schedules/cluster-schedules";
import { upsertSchedules } from "./schedules/upsert-schedules";

/**
 * Lock duration: a job's lock is renewed every lockDuration/2 by a timer, which runs whenever the
 * event loop is free. A chunk's work is asynchronous database I/O with a batch committed every
 * ~50 ms of CPU (1,000 participants at ~50 µs each), and an external-service call yields while
 * it waits, so the loop is never blocked for more than a fraction of a second: 10 s only expires
 * when the process is gone or frozen. Then BullMQ's stall check (every 5 s) hands the job to
 * another worker, which resumes at the checkpoint, so a killed worker's chunks come back within
 * ~15 s (they took 26–56 s with 30 s / 15 s). Going lower buys little: a second worker must
 * still be running, and a lock that expires under a merely slow process runs the chunk twice in
 * parallel, which the per-batch chunk lock makes safe but wasteful.
 */
export const LOCK_DURATION_MS = 10_000;
export const STALLED_INTERVAL_MS = 5_000;
/** A job that stalls this often is failed (and its task with it) rather than retried forever. */
export const MAX_STALLED_COUNT = 5;
/** The defaults of EXPORT_RETENTION_DAYS and DAILY_EXPORT_RETENTION_DAYS. */
const DEFAULT_EXPORT_RETENTION: ExportRetention = { taskExportDays: 30, dailyExportDays: 90 };
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
  /** The clock every job's time comes from: the system's (index.ts), or one a test stops. */
  clock: () => number;
  /** The study rules' external services (EXTERNAL_SERVICES_FILE); absent = none configured. */
  callExternalService?: ExternalServiceCaller;
  batchSize?: number;
  chunkSize?: number;
  /** False: every bulk batch runs in the engine (BULK_WRITES_IN_DATABASE=off). */
  bulkWritesInDatabase?: boolean;
  /** Set false in tests that drive housekeeping themselves: no maintenance schedules, no maintenance worker. */
  maintenance?: boolean;
  /** EXPORT_FILE_STORE: where export files are kept (PostgreSQL by default; the directory is RESULT_DIR). */
  fileStore?: FileStoreConfig["backend"];
  /** EXPORT_RETENTION_DAYS, DAILY_EXPORT_RETENTION_DAYS. */
  exportRetention?: ExportRetention;
  /** TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS; absent: their defaults. */
  taskRetention?: TaskRetentionDefaults;
  /** Age after which temporary participants are removed; see TEMP_PARTICIPANT_RETENTION_SECONDS. */
  temporaryParticipantRetentionSeconds?: number;
  /** Overrides of the lock timings, for tests that kill workers and cannot wait 45 s. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** E-mail delivery of the outbox; without it, messages stay pending for a worker that has it. */
  mail?: { smtpUrl: string; from: string; pollIntervalMs: number };
  /**
   * The study timer (TIMER_INTERVAL_SECONDS, TIMER_SCAN_INTERVAL_MS): its scan schedule and a
   * consumer of its queue. Absent: this process runs no scans; it still runs the ticks' tasks,
   * which are ordinary bulk tasks on the tasks queue.
   */
  timer?: { defaultIntervalSeconds: number; scanEveryMs: number };
  /**
   * The account lifecycle rounds (ACCOUNT_* settings; runs only with `maintenance`): a consumer
   * and a scheduler per enabled step; with none enabled, no consumer, and the schedulers of an
   * earlier configuration are removed. `everyMs` shortens the rounds in tests.
   */
  accountLifecycle?: { settings: AccountLifecycleSettings; everyMs?: number };
}

/** A queue this runtime consumes, with its worker. */
interface Consumer {
  queue: Queue;
  worker: Worker;
}

export interface WorkerRuntime {
  /** The tasks worker and queue. */
  worker: Worker;
  queue: Queue;
  /** Every queue this runtime consumes (tasks, maintenance, outbox, study-timer), for the dashboard. */
  queues: Queue[];
  /** Resolves with how many jobs of the legacy task queue this start moved onto the tasks queue. */
  legacyJobsMoved: Promise<number>;
  /** Resolves once the cluster schedules this runtime keeps are in place. */
  schedulesReady: Promise<void>;
  /** This runtime's registry, for GET /metrics on the health/admin port. */
  metrics: WorkerMetrics;
  /** Stops taking jobs; running chunks stop after their batch in flight, bounded by `timeoutMs`. */
  close: (timeoutMs: number) => Promise<"closed" | "timed-out">;
}

export function startWorkerRuntime(deps: WorkerRuntimeDeps): WorkerRuntime {
  let closing = false;
  const queue = new Queue(TASKS_QUEUE, { connection: deps.producerConnection, prefix: deps.prefix });
  // Filled below with every queue this runtime consumes; metrics read it at scrape time.
  const queues: Queue[] = [queue];
  const metrics = createWorkerMetrics({ database: deps.database, queues, logger: deps.logger });
  const files = createFileStore(deps.database.db, { backend: deps.fileStore ?? "postgres", directory: deps.resultDir });
  // Jobs an earlier release queued under the old name would otherwise wait there for good.
  const legacyJobsMoved = moveLegacyTaskJobs(deps.producerConnection, deps.prefix, queue).then(
    (moved) => {
      if (moved > 0) {
        deps.logger.info({ moved, from: LEGACY_TASKS_QUEUE, to: TASKS_QUEUE }, "moved the legacy task queue's jobs");
      }
      return moved;
    },
    (error: unknown) => {
      deps.logger.error({ err: error, queue: LEGACY_TASKS_QUEUE }, "could not move the legacy task queue's jobs");
      return 0;
    },
  );
  const processor = createTaskProcessor({
    database: deps.database,
    queue,
    files,
    resultDir: deps.resultDir,
    logger: deps.logger,
    isClosing: () => closing,
    onParticipantsProcessed: (count, ranIn) => {
      metrics.participantsProcessed.inc(count);
      metrics.bulkBatches.inc({ ran_in: ranIn });
    },
    onTimerTickSkipped: () => metrics.timerTicks.inc({ outcome: "skipped" }),
    onRuleFailures: (failures) => {
      for (const failure of failures)
        metrics.ruleFailures.inc({ event_type: failure.eventType, outcome: failure.outcome });
    },
    ...(deps.callExternalService ? { callExternalService: deps.callExternalService } : {}),
    clock: deps.clock,
    ...(deps.batchSize ? { batchSize: deps.batchSize } : {}),
    ...(deps.chunkSize ? { chunkSize: deps.chunkSize } : {}),
    ...(deps.bulkWritesInDatabase === false ? { writesInDatabase: false } : {}),
  });
  const worker = new Worker(TASKS_QUEUE, processor, {
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

  const consumers: Consumer[] = [];
  const schedules: Promise<void>[] = [];
  const consume = (name: string, processor: Processor, concurrency: number) => {
    const consumerQueue = new Queue(name, { connection: deps.producerConnection, prefix: deps.prefix });
    const consumer = new Worker(name, processor, { connection: deps.connection, prefix: deps.prefix, concurrency });
    consumer.on("error", (error) => deps.logger.error({ err: error, queue: name }, "worker error"));
    consumer.on("failed", (job, error) =>
      deps.logger.warn({ err: error, queue: name, job: job?.name }, "scheduled job failed; the next one follows"),
    );
    consumers.push({ queue: consumerQueue, worker: consumer });
    queues.push(consumerQueue);
    return consumerQueue;
  };

  if (deps.maintenance !== false) {
    // One at a time per process: housekeeping is light and must not compete with bulk work.
    const maintenanceQueue = consume(
      MAINTENANCE_QUEUE,
      createMaintenanceProcessor({
        database: deps.database,
        taskQueue: queue,
        logger: deps.logger,
        temporaryParticipantRetentionSeconds:
          deps.temporaryParticipantRetentionSeconds ?? DEFAULT_TEMP_RETENTION_SECONDS,
        files,
        exportRetention: deps.exportRetention ?? DEFAULT_EXPORT_RETENTION,
        taskRetention: deps.taskRetention ?? TASK_RETENTION_DEFAULTS,
        resultDir: deps.resultDir,
        clock: deps.clock,
      }),
      1,
    );
    schedules.push(upsertSchedules(maintenanceQueue, MAINTENANCE_SCHEDULES));
  }
  // One deletion at a time per process: a deletion is a handful of participants, and the
  // participant events of the API matter more than how fast an account goes.
  const deletionQueue: Queue = consume(
    ACCOUNT_DELETION_QUEUE,
    createAccountDeletionProcessor({
      database: deps.database,
      queue: () => deletionQueue,
      logger: deps.logger,
      onRuleFailures: (failures) => {
        for (const failure of failures)
          metrics.ruleFailures.inc({ event_type: failure.eventType, outcome: failure.outcome });
      },
      ...(deps.callExternalService ? { callExternalService: deps.callExternalService } : {}),
      clock: deps.clock,
    }),
    1,
  );
  if (deps.maintenance !== false) schedules.push(upsertSchedules(deletionQueue, ACCOUNT_DELETION_SCHEDULES));
  if (deps.maintenance !== false) {
    const lifecycle = deps.accountLifecycle;
    const enabled =
      lifecycle !== undefined && ACCOUNT_LIFECYCLE_STEPS.some((step) => lifecycleStepEnabled(lifecycle.settings, step));
    if (lifecycle && enabled) {
      // One round at a time per process: a round is batches of small transactions, never urgent.
      const lifecycleQueue = consume(
        ACCOUNT_LIFECYCLE_QUEUE,
        createAccountLifecycleProcessor({
          database: deps.database,
          settings: lifecycle.settings,
          deletionQueue: () => deletionQueue,
          logger: deps.logger,
          clock: deps.clock,
        }),
        1,
      );
      schedules.push(syncAccountLifecycleSchedules(lifecycleQueue, lifecycle.settings, lifecycle.everyMs));
    } else {
      // Switched off: the schedulers an earlier start left in Redis go, so no round fires again.
      const lifecycleQueue = new Queue(ACCOUNT_LIFECYCLE_QUEUE, {
        connection: deps.producerConnection,
        prefix: deps.prefix,
      });
      schedules.push(
        syncAccountLifecycleSchedules(lifecycleQueue, lifecycle?.settings).finally(() => lifecycleQueue.close()),
      );
    }
  }
  if (deps.mail) {
    // One round at a time per process, as the old poller had: messages go out one by one.
    const outboxQueue = consume(
      OUTBOX_QUEUE,
      createOutboxProcessor({
        db: deps.database.db,
        mailer: createSmtpMailer({ smtpUrl: deps.mail.smtpUrl, from: deps.mail.from }),
        logger: deps.logger,
        isClosing: () => closing,
        clock: deps.clock,
      }),
      1,
    );
    schedules.push(upsertSchedules(outboxQueue, [outboxSchedule(deps.mail.pollIntervalMs)]));
  }
  if (deps.timer) {
    // One scan at a time per process: a scan is a query and a few inserts; the ticks' work runs
    // on the tasks queue.
    const timerQueue = consume(
      TIMER_QUEUE,
      createStudyTimerProcessor({
        database: deps.database,
        taskQueue: queue,
        logger: deps.logger,
        defaultIntervalSeconds: deps.timer.defaultIntervalSeconds,
        onTick: (outcome) => metrics.timerTicks.inc({ outcome }),
        clock: deps.clock,
      }),
      1,
    );
    schedules.push(upsertSchedules(timerQueue, [studyTimerSchedule(deps.timer.scanEveryMs)]));
  }
  const schedulesReady = Promise.all(schedules).then(() => undefined);
  schedulesReady.catch((error: unknown) =>
    deps.logger.error({ err: error }, "could not set up the cluster schedules; another replica's remain in place"),
  );

  return {
    worker,
    queue,
    queues,
    legacyJobsMoved,
    schedulesReady,
    metrics,
    close: async (timeoutMs) => {
      closing = true;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"timed-out">((resolve) => {
        timer = setTimeout(() => resolve("timed-out"), timeoutMs);
      });
      try {
        const stopped = Promise.all([worker.close(), ...consumers.map((consumer) => consumer.worker.close())]).then(
          () => "closed" as const,
        );
        return await Promise.race([stopped, deadline]);
      } finally {
        clearTimeout(timer);
        await legacyJobsMoved;
        await Promise.all([queue.close(), ...consumers.map((consumer) => consumer.queue.close())]);
      }
    },
  };
}
