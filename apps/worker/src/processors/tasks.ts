import { DelayedError, UnrecoverableError, type Job, type Processor, type Queue } from "bullmq";
import type { Logger } from "pino";
import { eq } from "drizzle-orm";
import { tasks, type DbHandle } from "@studyflow/db";
import { type RuleFailureRecord } from "@studyflow/domain/events";
import { type FileStore } from "@studyflow/domain/files";
import { type ExternalServiceCaller } from "@studyflow/domain/rules";
import { failTask, finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { type BatchRunner } from "@studyflow/domain/tasks";
import { TASK_CHUNK_JOB_NAME, chunkJobId, taskJobOptions, taskJobSchema, type TaskJob } from "@studyflow/queue";

export interface TaskProcessorDeps {
  database: DbHandle;
  /** Producer of the chunk jobs a task is split into. */
  queue: Queue;
  resultDir: string;
  /** Where export tasks write their files (the PostgreSQL store unless configured otherwise). */
  files?: FileStore;
  logger: Logger;
  clock: () => number;
  /** The study rules' external services; absent = none configured. */
  callExternalService?: ExternalServiceCaller;
  /** Told of the rule failures every committed batch recorded (metrics). */
  onRuleFailures?: (failures: readonly RuleFailureRecord[]) => void;
  /** True once the process is shutting down: running chunks stop after their batch in flight. */
  isClosing?: () => boolean;
  /** Participants per batch; tests use small batches to interleave with other writers. */
  batchSize?: number;
  /** Participants per chunk; tests use small chunks to get several chunks from few participants. */
  chunkSize?: number;
  /** False: every batch runs in the engine, none in the database. */
  writesInDatabase?: boolean;
  /** Told the participants of every committed batch, and where the batch ran (metrics). */
  onParticipantsProcessed?: (count: number, ranIn: Exclude<BatchRunner, "export">) => void;
  /** Told when a timer tick is skipped at its start because another task of its study was ahead (metrics). */
  onTimerTickSkipped?: () => void;
}

/** How soon a task waiting for another task of its study looks again: a person watches the queue. */
const BUSY_STUDY_RETRY_MS = 1_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function taskIdOf(data: unknown): string | null {
  const taskId = (data as { taskId?: unknown } | null)?.taskId;
  return typeof taskId === "string" && UUID.test(taskId) ? taskId : null;
}

/**
 * One processor for both job kinds of the task queue, for every task kind (run-actions, timer
 * ticks, exports; the kind's plan, batch step and finalisation are looked up by tasks.kind in the
 * domain's task-kind table): a task job plans the task into key-range chunks and queues a job per
 * chunk; a chunk job runs its range, and whoever finishes the last chunk writes the result (a
 * result document, or an export's file) and completes the task.
 */
export function createTaskProcessor(deps: TaskProcessorDeps): Processor {
  const db = deps.database.db;
  const { clock } = deps;

  async function runTaskJob(job: Job, data: Extract<TaskJob, { kind: "task" }>, token: string | undefined) {
    const planned = await planTask(db, data.taskId, { clock, chunkSize: deps.chunkSize, files: deps.files });
    if (planned.status === "ended") return { skipped: "task is gone or has ended" };
    if (planned.status === "skipped") {
      // A timer tick that found another task of its study ahead: recorded as skipped, never run.
      deps.onTimerTickSkipped?.();
      deps.logger.info({ taskId: data.taskId, reason: planned.reason }, "timer tick skipped");
      return { skipped: planned.reason };
    }
    if (planned.status === "busy") {
      // Another task of this study goes first; look again shortly without spending an attempt.
      if (token) {
        await job.moveToDelayed(clock() + BUSY_STUDY_RETRY_MS, token);
        throw new DelayedError();
      }
      throw new Error("another run-actions task of this study is running");
    }
    const pending = planned.chunks.filter((chunk) => chunk.status === "pending");
    if (pending.length === 0) {
      await finalizeIfComplete(db, data.taskId, deps.resultDir, clock, deps.files);
      return { chunks: planned.chunks.length };
    }
    // Deterministic ids: a planner that runs again adds no second job for a chunk already queued.
    await deps.queue.addBulk(
      pending.map((chunk) => ({
        name: TASK_CHUNK_JOB_NAME,
        data: { kind: "chunk", taskId: data.taskId, chunkIndex: chunk.chunkIndex } satisfies TaskJob,
        opts: { ...taskJobOptions, jobId: chunkJobId(data.taskId, chunk.chunkIndex) },
      })),
    );
    deps.logger.info({ taskId: data.taskId, jobId: job.id, chunks: planned.chunks.length }, "task planned");
    return { chunks: planned.chunks.length };
  }

  async function runChunkJob(job: Job, data: Extract<TaskJob, { kind: "chunk" }>, token: string | undefined) {
    // processChunk reports the running total of this attempt; the hook wants each batch's share.
    let reported = 0;
    const outcome = await processChunk(db, data.taskId, data.chunkIndex, {
      clock,
      ...(deps.callExternalService ? { callExternalService: deps.callExternalService } : {}),
      ...(deps.onRuleFailures ? { onRuleFailures: deps.onRuleFailures } : {}),
      ...(deps.batchSize ? { batchSize: deps.batchSize } : {}),
      ...(deps.files ? { files: deps.files } : {}),
      ...(deps.writesInDatabase === false ? { writesInDatabase: false } : {}),
      onBatch: (processed, { ranIn }) => {
        if (ranIn !== "export") deps.onParticipantsProcessed?.(processed - reported, ranIn);
        reported = processed;
        return job.updateProgress(processed);
      },
      shouldStop: () => deps.isClosing?.() ?? false,
    });
    if (outcome === "stopped" && token) {
      // Shutting down mid-chunk: hand the job back at once without spending an attempt; the
      // next worker resumes after the last committed batch.
      await job.moveToDelayed(clock(), token);
      throw new DelayedError();
    }
    if (outcome === "done") {
      const finalized = await finalizeIfComplete(db, data.taskId, deps.resultDir, clock, deps.files);
      if (finalized === "completed") deps.logger.info({ taskId: data.taskId }, "task completed");
    }
    return { outcome };
  }

  return async (job, token) => {
    const parsed = taskJobSchema.safeParse(job.data);
    if (!parsed.success) {
      const taskId = taskIdOf(job.data);
      if (taskId) await failTask(db, taskId, "the task's job payload was invalid", clock);
      throw new UnrecoverableError("invalid run-actions job payload");
    }
    const data = parsed.data;
    const log = deps.logger.child({ jobId: job.id, taskId: data.taskId });
    try {
      return data.kind === "task" ? await runTaskJob(job, data, token) : await runChunkJob(job, data, token);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      if (!(await isTaskLive(db, data.taskId))) {
        // The task went while its batch ran (its study deleted, it was canceled): a retry would
        // only find it gone, so the job ends here instead of spending its attempts.
        log.info({ reason: error instanceof Error ? error.message : String(error) }, "job dropped: its task has ended");
        return { skipped: "task is gone or has ended" };
      }
      if (error instanceof Error && error.name === "RuleValidationError") {
        await failTask(db, data.taskId, `the task's rules are invalid: ${error.message}`, clock);
        throw new UnrecoverableError(error.message);
      }
      log.warn({ err: error, attempt: job.attemptsMade + 1 }, "run-actions job attempt failed");
      throw error;
    }
  };
}

/**
 * Whether the task still waits or runs. A task whose study was deleted is gone with it (the
 * tasks rows go with their study); a canceled or finished one has nothing left to run.
 */
async function isTaskLive(db: DbHandle["db"], taskId: string): Promise<boolean> {
  const [task] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, taskId)).limit(1);
  return task !== undefined && (task.status === "queued" || task.status === "in_progress");
}

/**
 * After a job failed for good (attempts exhausted, stalled too often, unrecoverable), its task
 * is failed with the reason, so no task is left in_progress.
 */
export async function failTaskOfFailedJob(
  deps: Pick<TaskProcessorDeps, "database" | "clock">,
  job: Job | undefined,
  error: Error,
): Promise<void> {
  if (!job) return;
  const taskId = taskIdOf(job.data);
  if (!taskId) return;
  if ((await job.getState()) !== "failed") return;
  await failTask(deps.database.db, taskId, `the run failed: ${error.message}`, deps.clock);
}
