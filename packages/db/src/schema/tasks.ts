import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { studies } from "./studies";

/** Every status a task can have, in the order of its life. */
/** `skipped`: a timer tick that fell due while another bulk task of the study ran; it never ran. */
export const TASK_STATUSES = ["queued", "in_progress", "completed", "failed", "canceled", "skipped"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
/**
 * `run-actions`: a researcher's rules over every participant; `timer`: one tick of the study timer;
 * `export-*`: a study's responses, participants or reports streamed into a stored file;
 * `run-actions-previous-responses`: a researcher's rules replayed over every participant's stored responses.
 */
export const TASK_KINDS = [
  "run-actions",
  "run-actions-previous-responses",
  "timer",
  "export-responses",
  "export-participants",
  "export-reports",
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
export type ExportTaskKind = Extract<TaskKind, `export-${string}`>;

export interface RunActionsInput {
  rules: unknown[];
  dryRun: boolean;
}

/**
 * Rules replayed over stored responses (CASE's previous-responses action): each participant's
 * responses in arrival order, as SUBMIT events. The input of the kind "run-actions-previous-responses"
 * once the chunk pipeline has it (tasks.kind is plain text: no migration needed for a new kind).
 */
export interface PreviousResponsesInput {
  rules: unknown[];
  /** Only responses to these surveys; empty: every survey. */
  surveyKeys: string[];
  /** Only responses that arrived after `from` and (when > 0) before `to`, Unix seconds. */
  from: number;
  to: number;
}

/** A timer tick: the TIMER event over every eligible participant, with the study's current rules. */
export interface TimerTickInput {
  /** When the tick fell due (ISO 8601): the start of its slot. One tick per study and slot. */
  dueAt: string;
  /** The rules version the tick runs (fixed when the tick is created). */
  rulesVersion: number;
  /** The schedule the slot was computed on: the study's interval, or the workers' default. */
  intervalSeconds: number;
  offsetSeconds: number;
  /** True when intervalSeconds is the workers' default (TIMER_INTERVAL_SECONDS), not the study's own. */
  defaultInterval: boolean;
}

/** The row order of a response export: CASE's `sort` on submittedAt or arrivedAt, ties broken by id. */
export interface ResponseExportOrder {
  field: "submittedAt" | "arrivedAt";
  direction: "asc" | "desc";
}

/** What every export persists: its (already validated) Mongo-style filter and whether parts are gzip members. */
interface ExportInputBase {
  /** CASE's Mongo-style filter as the caller sent it; translated to SQL by each batch. */
  filter?: unknown;
  gzip: boolean;
  /** A daily export: only responses that arrived in [fromArrivedAt, toArrivedAt) (Unix seconds). */
  arrivedWindow?: { from: number; to: number };
}

export interface ResponseExportInput extends ExportInputBase {
  surveyKey: string;
  format: "wide" | "long" | "json";
  questionOptionSep: string;
  shortKeys: boolean;
  extraContextColumns: string[];
  includeMeta: Record<string, boolean>;
  order: ResponseExportOrder;
  /** The study's track-account flag when the export was asked for: adds CASE's account columns. */
  accountColumns: boolean;
  /** When the export was asked for (Unix seconds): the instant CASE's version lookup by time uses. */
  now: number;
  /**
   * Whether the CSV cells participants filled are guarded against spreadsheet formulas. Recorded
   * with the task so that every chunk, and a resumed one, writes alike; absent on tasks recorded
   * before the guard existed, which read it as off (their parts are CASE's bytes).
   */
  guardFormulas?: boolean;
}

export type ParticipantExportInput = ExportInputBase;

export interface ReportExportInput extends ExportInputBase {
  reportKey?: string;
  /** CASE's `type`: "raw" (its JSON document) or "csv" (a column per data key). */
  format: "raw" | "csv";
  /** The csv header's data keys, fixed when the task is planned (every chunk writes the same columns). */
  dataKeys?: string[];
  /** As ResponseExportInput.guardFormulas: the csv's data values guarded; absent = off. */
  guardFormulas?: boolean;
}

/**
 * A task's input; `kind` says which: RunActionsInput for "run-actions", TimerTickInput for "timer",
 * the export inputs for the export kinds (PreviousResponsesInput for the previous-responses kind).
 */
export type TaskInput =
  | RunActionsInput
  | PreviousResponsesInput
  | TimerTickInput
  | ResponseExportInput
  | ParticipantExportInput
  | ReportExportInput;

export const tasks = pgTable(
  "tasks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    kind: text("kind").$type<TaskKind>().notNull(),
    /** The job's input, persisted so a task survives any process. */
    input: jsonb("input").$type<TaskInput>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    status: text("status").$type<TaskStatus>().notNull().default("queued"),
    targetCount: integer("target_count").notNull().default(0),
    processedCount: integer("processed_count").notNull().default(0),
    resultFile: text("result_file").notNull().default(""),
    fileType: text("file_type").notNull().default("application/json"),
    error: text("error").notNull().default(""),
    startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }),
    finishedAt: timestamp("finished_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("tasks_study_idx").on(t.studyKey, t.createdAt.desc())],
);

export type ChunkStatus = "pending" | "done";

/** A key range of a task's participants, with the checkpoint that commits with each batch. */
export const taskChunks = pgTable(
  "task_chunks",
  {
    taskId: uuid("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    chunkIndex: integer("chunk_index").notNull(),
    /**
     * Exclusive lower bound of the kind's keys ("" = from the start): participant ids for the
     * participant kinds, an encoded (instant, id) for responses and reports.
     */
    fromKey: text("from_key").notNull(),
    /** Inclusive upper bound of the kind's keys (null = to the end). */
    toKey: text("to_key"),
    /** Last key whose batch committed; processing resumes after it. */
    cursor: text("cursor").notNull(),
    status: text("status").$type<ChunkStatus>().notNull().default("pending"),
    processedCount: integer("processed_count").notNull().default(0),
    errorCount: integer("error_count").notNull().default(0),
    changedPerRule: jsonb("changed_per_rule").$type<number[]>().notNull().default([]),
    /** First per-participant errors of this chunk (capped), for the result file. */
    errors: jsonb("errors").$type<{ participantId: string; error: string }[]>().notNull().default([]),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.chunkIndex] })],
);
