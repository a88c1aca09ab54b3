import type { Database, Executor, TaskKind, taskChunks } from "@studyflow/db";
import type { DomainContext } from "../events/event-runner";
import type { RuleFailureRecord } from "../events/rule-failures";
import type { FileStore } from "../files/file-store";
import type { TaskRow } from "./task-row";

/**
 * Where a batch's rules ran: in the database as one statement, or in the engine over read rows;
 * "export" for an export's batch, which runs no rules (and whose rows are no participants).
 */
export type BatchRunner = "database" | "engine" | "export";

/** The task_chunks columns a batch reads, as postgres.js returns them. */
export interface RawChunk {
  status: string;
  cursor: string;
  to_key: string | null;
  processed_count: number;
  error_count: number;
  changed_per_rule: number[];
  errors: { participantId: string; error: string }[];
}

/** What a batch adds to its chunk: rows processed, per-rule changes, errors (or an export's mismatches). */
export interface BatchTally {
  processed: number;
  changedPerRule: number[];
  errors: { participantId: string; error: string }[];
  errorCount: number;
}

/** A batch a kind ran inside the chunk loop's transaction. */
export interface BatchOutcome {
  /** The last key the batch covered: the chunk's checkpoint moves here. */
  last: string;
  /** True when the chunk has no rows after this batch. */
  finished: boolean;
  tally: BatchTally;
  /** Rule failures to tell the caller of once the batch committed (bulk rule runs only). */
  failures?: RuleFailureRecord[];
  ranIn?: BatchRunner;
}

/** Thrown by a kind's batch when a guarded write lost a race: the loop rolls back and retries under row locks. */
export class VersionConflict extends Error {}

export interface ChunkRunOptions extends DomainContext {
  batchSize?: number;
  /**
   * Called after every committed batch (e.g. to report job progress), with where it ran: in the
   * database (one statement, see pushdown-sql.ts) or in the engine.
   */
  onBatch?: (processedInChunk: number, batch: { ranIn: BatchRunner }) => Promise<void> | void;
  /**
   * Whether batches of flag, status and survey rules may run in the database (default true); false runs
   * every batch in the engine.
   */
  writesInDatabase?: boolean;
  /** Asked before every batch; true stops after the batch in flight (worker shutdown). */
  shouldStop?: () => boolean;
  /** Where export kinds write their parts; the PostgreSQL store by default. */
  files?: FileStore;
}

/** What a kind's batch step is given, besides its transaction. */
export interface BatchInput {
  chunkIndex: number;
  chunk: RawChunk;
  batchSize: number;
  /** True on the retry after a VersionConflict: read the rows under row locks. */
  lock: boolean;
}

/** A kind's batch step for one chunk, prepared once per chunk run (rules compiled, study read). */
export interface ChunkBatchStep {
  runBatch(tx: Executor, input: BatchInput): Promise<BatchOutcome>;
}

/** How a task is split: the rows it will process, and chunk boundaries over the kind's key space. */
export interface TaskPlan {
  targetCount: number;
  /** Inclusive upper keys of every chunk but the last, in key order; chunk i covers (boundary[i-1], boundary[i]]. */
  boundaries: string[];
}

export interface FinalizeContext {
  resultDir: string;
  clock: () => number;
  files: FileStore;
}

export interface FinalizedTask {
  resultFile: string;
  processedCount: number;
  fileType?: string;
}

/**
 * One kind of task on the chunk pipeline. The loop (task-pipeline/process-chunk.ts) owns the key
 * range, the chunk lock, the checkpoint, progress, cancel and shutdown; a kind supplies its
 * planning, its batch step and its finalisation.
 */
export interface TaskKindDefinition {
  /**
   * Writes participants: one such task per study runs at a time, in creation order (two rule sets
   * interleaving over the same participants would leave states nobody asked for). Read-only kinds
   * (exports) run beside anything.
   */
  writesParticipants: boolean;
  /** Rather than wait behind another participant-writing task, the task is recorded as skipped. */
  skipWhenBusy: boolean;
  /** Rows per chunk and per batch when the caller does not say (see bulk-tuning.ts, exports/export-tuning.ts). */
  chunkSize: number;
  batchSize: number;
  /** Counts the rows and splits them into chunks; runs in the planning transaction. */
  plan(tx: Executor, task: TaskRow, chunkSize: number): Promise<TaskPlan>;
  /** Runs once in the planning transaction after the chunks are written (an export creates its file). */
  afterPlan?(tx: Executor, task: TaskRow, chunkCount: number, files: FileStore): Promise<void>;
  /** Prepares the batch step of one chunk run. */
  openChunk(db: Database, task: TaskRow, options: ChunkRunOptions): Promise<ChunkBatchStep>;
  /** Every chunk is done: write the result, in the transaction that completes the task. */
  finalize(
    tx: Executor,
    task: TaskRow,
    chunks: (typeof taskChunks.$inferSelect)[],
    context: FinalizeContext,
  ): Promise<FinalizedTask>;
}

export type TaskKindTable = Record<TaskKind, TaskKindDefinition>;
