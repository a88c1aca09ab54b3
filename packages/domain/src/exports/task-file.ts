import { type Readable, pipeline } from "node:stream";
import { createGunzip } from "node:zlib";
import { and, eq, sql } from "drizzle-orm";
import { storedFiles, taskChunks, type Database, type Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import type { FileStore, StoredFileRow } from "../files/file-store";
import type { TaskRow } from "../tasks/task-row";

export interface OpenedFile {
  /** The file's name: ending in .gz when the researcher asked for a gzip file. */
  fileName: string;
  contentType: string;
  /** "gzip": the body is one gzip member. */
  contentEncoding?: "gzip";
  /** The body's bytes (compressed when gzip); NaN when not known before the file is read. */
  size: number;
  /** The body's bytes once decompressed; NaN when not known. */
  plainSize: number;
  /** Whether the file, as named, is the gzip body itself (a .gz file) rather than its content. */
  gzipFile: boolean;
  /** Data rows in the file. */
  rows: number;
  body: Readable;
}

/** A file the caller may read: complete, not expired; otherwise a NotFound/Conflict saying why. */
export function openStoredFile(store: FileStore, file: StoredFileRow): OpenedFile {
  if (file.expiredAt) {
    throw new NotFound(
      `the export file "${file.name}" expired on ${file.expiredAt.toISOString()} and was removed; export again`,
    );
  }
  if (!file.complete) throw new Conflict(`the export file "${file.name}" is not complete yet`);
  if (file.contentEncoding === "gzip" && file.gzipFraming === "members") {
    // Written before gzip files were one member: a client decoding Content-Encoding: gzip would
    // stop after the first part, so the file goes out decompressed, its size unknown until read.
    // pipeline destroys the store's stream when the gunzip side ends early or fails.
    return {
      fileName: file.name.replace(/\.gz$/i, ""),
      contentType: file.contentType,
      size: NaN,
      plainSize: NaN,
      gzipFile: false,
      rows: file.rows,
      body: pipeline(store.read(file), createGunzip(), () => undefined),
    };
  }
  const gzip = file.contentEncoding === "gzip";
  return {
    fileName: file.name,
    contentType: file.contentType,
    ...(gzip ? { contentEncoding: "gzip" as const } : {}),
    size: file.size,
    plainSize: gzip ? (file.plainSize ?? NaN) : file.size,
    gzipFile: gzip && /\.gz$/i.test(file.name),
    rows: file.rows,
    body: store.read(file),
  };
}

/**
 * The file of a completed export task, streamed from the store. The caller has checked that the
 * caller may see the task (getVisibleTask). A task that is not an export, not completed, or whose
 * file retention removed answers with a NotFound or Conflict that says which.
 */
export async function openTaskFile(db: Database, store: FileStore, task: TaskRow): Promise<OpenedFile> {
  if (!task.kind.startsWith("export-"))
    throw new NotFound(`task ${task.id} is a ${task.kind} task and has no export file`);
  if (task.status !== "completed")
    throw new Conflict(`task ${task.id} is ${task.status}; its file is there once it completes`);
  const [file] = await db
    .select()
    .from(storedFiles)
    .where(and(eq(storedFiles.taskId, task.id), eq(storedFiles.studyKey, task.studyKey)))
    .limit(1);
  if (!file) throw new NotFound(`the export file of task ${task.id} was removed`);
  return openStoredFile(store, file);
}

/**
 * Rows of an export that did not match their survey definition: exported as far as possible and
 * counted per chunk (task_chunks.error_count), never failing the export.
 */
export async function exportMismatches(db: Executor, taskId: string): Promise<number> {
  const [row] = await db
    .select({ mismatches: sql<number>`coalesce(sum(${taskChunks.errorCount}), 0)::int` })
    .from(taskChunks)
    .where(eq(taskChunks.taskId, taskId));
  return row?.mismatches ?? 0;
}
