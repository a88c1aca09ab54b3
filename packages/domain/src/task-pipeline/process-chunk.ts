import { eq, sql } from "drizzle-orm";
import { rawClientOf, tasks, type Database, type Executor } from "@studyflow/db";
import type { RuleFailureRecord } from "../events/rule-failures";
import { createPostgresFileStore } from "../files/postgres-file-store";
import { MAX_REPORTED_ERRORS } from "../bulk/bulk-tuning";
import {
  VersionConflict,
  type BatchOutcome,
  type BatchTally,
  type ChunkRunOptions,
  type RawChunk,
} from "../tasks/task-kind";
import { taskKindOf } from "./task-kinds";

export type { BatchRunner, ChunkRunOptions } from "../tasks/task-kind";

export type ChunkOutcome = "done" | "canceled" | "stopped";

/**
 * Moves the chunk's checkpoint past a batch and adds its counts to the chunk and the task, in the
 * batch's transaction.
 */
async function recordBatch(
  tx: Executor,
  taskId: string,
  chunkIndex: number,
  chunk: RawChunk,
  batch: { last: string; finished: boolean; tally: BatchTally; at: Date },
): Promise<void> {
  const { tally } = batch;
  const mergedChanged = [...chunk.changed_per_rule];
  tally.changedPerRule.forEach((count, index) => {
    mergedChanged[index] = (mergedChanged[index] ?? 0) + (count ?? 0);
  });
  for (let index = 0; index < mergedChanged.length; index++) mergedChanged[index] ??= 0;
  // one statement, one round trip: the chunk's checkpoint and the task's progress
  await rawClientOf(tx)`
    with checkpoint as (
      update task_chunks set
        cursor = ${batch.last}, status = ${batch.finished ? "done" : "pending"},
        processed_count = ${chunk.processed_count + tally.processed},
        error_count = ${chunk.error_count + tally.errorCount},
        changed_per_rule = ${JSON.stringify(mergedChanged)}::text::jsonb,
        errors = ${JSON.stringify([...chunk.errors, ...tally.errors].slice(0, MAX_REPORTED_ERRORS))}::text::jsonb,
        updated_at = ${batch.at.toISOString()}
      where task_id = ${taskId} and chunk_index = ${chunkIndex})
    update tasks set processed_count = processed_count + ${tally.processed}, updated_at = ${batch.at.toISOString()}
    where id = ${taskId} and ${tally.processed}::int > 0`;
}

/**
 * Runs one key-range chunk of a task of any kind to its end, batch by batch. The loop is the same
 * for every kind; the kind's batch step (task-kinds.ts) does the batch's work inside the loop's
 * transaction. Each batch commits the kind's writes (participants, or an export's file part), the
 * chunk's checkpoint and the task's progress together, so a process killed at any moment resumes
 * exactly after the last committed batch. The chunk row is locked per batch, so even two processes
 * on one chunk never process a row twice. Before every batch the loop looks for a cancel (the task
 * left in_progress) and a shutdown (`shouldStop`).
 */
export async function processChunk(
  db: Database,
  taskId: string,
  chunkIndex: number,
  options: ChunkRunOptions,
): Promise<ChunkOutcome> {
  const [task] = await db
    .select()
    .from(tasks)
    .where(eq(tasks.id, sql.placeholder("taskId")))
    .prepare("chunk_task_row")
    .execute({ taskId });
  if (!task || task.status !== "in_progress") return "canceled";
  const kind = taskKindOf(task.kind);
  const files = options.files ?? createPostgresFileStore(db);
  const step = await kind.openChunk(db, task, { ...options, files });
  const batchSize = options.batchSize ?? kind.batchSize;
  let processedInChunk = 0;

  for (;;) {
    if (options.shouldStop?.()) return "stopped";

    // The per-batch bookkeeping statements are postgres.js's, prepared once per connection (see
    // rawClientOf): a batch of a million-participant run is a few dozen milliseconds, and drizzle's
    // unprepared statements cost a round trip more each. The chunk is read with its task's status,
    // so a cancel is seen before every batch without a statement of its own.
    const runBatch = (lock: boolean) =>
      db.transaction(async (tx): Promise<BatchOutcome | "canceled"> => {
        const [chunk] = await rawClientOf(tx)<(RawChunk & { task_status: string })[]>`
          select c.status, c.cursor, c.to_key, c.processed_count, c.error_count, c.changed_per_rule, c.errors,
            t.status as task_status
          from task_chunks c join tasks t on t.id = c.task_id
          where c.task_id = ${taskId} and c.chunk_index = ${chunkIndex} for update of c`;
        // gone with its task (the study was deleted): the caller finds the task gone too
        if (!chunk) throw new Error(`chunk ${chunkIndex} of task ${taskId} does not exist`);
        if (chunk.task_status !== "in_progress") return "canceled";
        if (chunk.status === "done") {
          const nothing: BatchTally = { processed: 0, changedPerRule: [], errors: [], errorCount: 0 };
          return { last: chunk.cursor, finished: true, tally: nothing };
        }
        const outcome = await step.runBatch(tx, { chunkIndex, chunk, batchSize, lock });
        await recordBatch(tx, taskId, chunkIndex, chunk, { ...outcome, at: new Date(options.clock()) });
        return outcome;
      });

    let batch: BatchOutcome | "canceled";
    try {
      batch = await runBatch(false);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      // An API request changed a participant between our read and write: the whole batch was rolled
      // back; read it again under row locks, so this time nobody can get in between.
      batch = await runBatch(true);
    }
    if (batch === "canceled") return "canceled";
    const processed = batch.tally.processed;
    processedInChunk += processed;
    const failures: RuleFailureRecord[] = batch.failures ?? [];
    if (failures.length > 0) options.onRuleFailures?.(failures);
    if (processed > 0) await options.onBatch?.(processedInChunk, { ranIn: batch.ranIn ?? "engine" });
    if (batch.finished) return "done";
  }
}
