import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { studies } from "./studies";
import { tasks } from "./tasks";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * A file the store keeps in PostgreSQL (export files). Every api and worker process already
 * reaches the database, so nothing else must be shared between machines; a batch's part commits
 * with the chunk's checkpoint, so a killed worker leaves each row in the file exactly once; and the
 * files are backed up with the study's data.
 */
export const storedFiles = pgTable(
  "stored_files",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    /** The task that writes the file; null for files stored outside a task. */
    taskId: uuid("task_id").references(() => tasks.id, { onDelete: "set null" }),
    /** The name a download offers, e.g. `intake_responses_2026-01-31.csv.gz`. */
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    /** "gzip" when the file is stored gzip-compressed (gzipFraming says how). */
    contentEncoding: text("content_encoding").$type<"gzip">(),
    /**
     * How a gzip file's parts are stored. "stream": raw DEFLATE data with the part's CRC-32 and
     * length, read as one gzip member (files/gzip-stream.ts). "members": each part a gzip member of
     * its own, as files written before migration 0032 are. Null when the file is not gzip.
     */
    gzipFraming: text("gzip_framing").$type<"stream" | "members">(),
    /** Bytes as stored (compressed when gzip), summed over the parts when the file completes. */
    size: bigint("size", { mode: "number" }).notNull().default(0),
    /**
     * A gzip stream's bytes once decompressed, from its parts' trailers when the file completes;
     * null for any other file (its size is its bytes) and for gzip members.
     */
    plainSize: bigint("plain_size", { mode: "number" }),
    /** Data rows (responses, participants, reports) in the file. */
    rows: bigint("rows", { mode: "number" }).notNull().default(0),
    createdAt: createdAt(),
    /** After this the retention job removes the parts and marks the file expired. */
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    /** True once the header, every batch and the footer are in: only then can it be read. */
    complete: boolean("complete").notNull().default(false),
    /** Set when retention removed the contents; the row stays so a download can say so. */
    expiredAt: timestamp("expired_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("stored_files_study_idx").on(t.studyKey, t.createdAt),
    index("stored_files_task_idx").on(t.taskId),
    index("stored_files_expires_idx").on(t.expiresAt),
    check(
      "stored_files_gzip_framing",
      sql`coalesce(${t.contentEncoding} = 'gzip', false) = (${t.gzipFraming} is not null) and ${t.gzipFraming} in ('stream', 'members')`,
    ),
  ],
);

/**
 * The bytes of a stored file, in order of (chunk_index, seq): a header part at chunk -1, one part
 * per committed batch (seq = the rows of the chunk before it, so a retried batch writes the same
 * key), a footer part after the last chunk. `data` is compressed with lz4 (migration 0031; stored
 * EXTERNAL, uncompressed, before): a long export's CSV shrinks severalfold, and PostgreSQL writes
 * fewer TOAST rows and less WAL for less CPU than lz4 costs. gzip parts do not compress and are kept
 * as they are. A server built without lz4 keeps the column EXTERNAL.
 */
export const storedFileParts = pgTable(
  "stored_file_parts",
  {
    fileId: uuid("file_id")
      .notNull()
      .references(() => storedFiles.id, { onDelete: "cascade" }),
    chunkIndex: integer("chunk_index").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    /** Data rows in this part (0 for header, footer and separator parts). */
    rows: integer("rows").notNull().default(0),
    /**
     * A separator part: the text that joins a chunk's first rows to the rows before it (JSON's
     * comma). The one before the file's first data row is dropped when the file completes.
     */
    separator: boolean("separator").notNull().default(false),
    data: bytea("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.fileId, t.chunkIndex, t.seq] })],
);

/** Options of a study's daily response export, as a researcher set them. */
export interface DailyExportOptions {
  format: "wide" | "long" | "json";
  questionOptionSep: string;
  shortKeys: boolean;
  extraContextColumns: string[];
  includeMeta: { position: boolean; initTimes: boolean; displayedTimes: boolean; responsedTimes: boolean };
  gzip: boolean;
  /**
   * The CSV cells participants filled guarded against spreadsheet formulas. Absent in settings saved
   * before the guard existed: they read as on, the default of every export.
   */
  guardFormulas?: boolean;
}

/** A study's daily export: every day, one file per chosen survey with the previous day's responses. */
export const dailyExportConfigs = pgTable("daily_export_configs", {
  studyKey: text("study_key")
    .primaryKey()
    .references(() => studies.key, { onDelete: "cascade" }),
  surveyKeys: jsonb("survey_keys").$type<string[]>().notNull().default([]),
  options: jsonb("options").$type<DailyExportOptions>().notNull(),
  enabled: boolean("enabled").notNull().default(true),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/**
 * One day's export of one survey. Unique per (study, survey, day): however many workers run the
 * daily job, and however often, a day is exported once.
 */
export const dailyExports = pgTable(
  "daily_exports",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    surveyKey: text("survey_key").notNull(),
    /** The day exported, YYYY-MM-DD in UTC. */
    day: text("day").notNull(),
    taskId: uuid("task_id").references(() => tasks.id, { onDelete: "set null" }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("daily_exports_day_uq").on(t.studyKey, t.surveyKey, t.day),
    // Removing a task past retention sets the day's task_id to null (the day stays claimed).
    index("daily_exports_task_idx")
      .on(t.taskId)
      .where(sql`${t.taskId} is not null`),
  ],
);
