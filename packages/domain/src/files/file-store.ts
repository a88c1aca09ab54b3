import { gzipSync } from "node:zlib";
import type { Readable } from "node:stream";
import type { Database, Executor, storedFiles } from "@studyflow/db";
import { deflatePart, gzipStream } from "./gzip-stream";

export type StoredFileRow = typeof storedFiles.$inferSelect;

/** Where a part sits in its file: parts are read in (chunkIndex, seq) order. */
export interface PartKey {
  chunkIndex: number;
  seq: number;
}

/** The header goes before every chunk, the footer after every chunk. */
export const HEADER_PART: PartKey = { chunkIndex: -1, seq: 0 };
export const FOOTER_PART: PartKey = { chunkIndex: 2_147_483_647, seq: 0 };
/** A chunk's separator part goes before its first data part (whose seq is 0: no rows before it). */
export const separatorPart = (chunkIndex: number): PartKey => ({ chunkIndex, seq: -1 });

export interface NewStoredFile {
  studyKey: string;
  taskId?: string;
  name: string;
  contentType: string;
  /** Stored gzip-compressed, read as one gzip member (gzip-stream.ts). */
  gzip: boolean;
  expiresAt?: Date;
}

export interface PartMeta {
  /** Data rows in the part; 0 for header, footer and separator. */
  rows: number;
  separator?: boolean;
}

/**
 * Export files: one interface, backends beside it. The file's record (stored_files) is always in
 * PostgreSQL; the backend holds the bytes of its parts.
 *
 * - `postgres` (default): parts are rows of stored_file_parts, written in the caller's transaction.
 *   Every api and worker process on every machine already reaches the database, so nothing new is
 *   shared; a batch's part commits in the transaction of the chunk's checkpoint, so a SIGKILL
 *   anywhere leaves every row in the file exactly once with no truncation logic; the files are
 *   backed up with the study's data; and no other service is reachable in this deployment.
 * - `filesystem`: parts are files under a directory every process mounts (a shared volume). A part
 *   is written under a name derived from its key (the rows of its chunk before it), so a batch
 *   retried after a crash overwrites its own part rather than adding one.
 */
export interface FileStore {
  readonly backend: "postgres" | "filesystem";
  /** Records a new, incomplete file in the caller's transaction. */
  create(tx: Executor, file: NewStoredFile): Promise<StoredFileRow>;
  /**
   * Stores one part (gzip-compressed when the file is), keyed so that a retry replaces it: text is
   * written as UTF-8, bytes as they are (an uploaded image).
   */
  writePart(tx: Executor, file: StoredFileRow, key: PartKey, text: string | Uint8Array, meta: PartMeta): Promise<void>;
  /**
   * Completes the file: drops the separator parts before its first data row (the json array's
   * first element takes no comma, whichever chunk it is in), sums its size, records its rows.
   */
  complete(tx: Executor, fileId: string, rows: number): Promise<StoredFileRow>;
  /**
   * The bytes of a complete file in part order, a part or two in memory at a time; a gzip file's
   * as one gzip member ("stream" framing) or as its members, back to back ("members").
   */
  read(file: StoredFileRow): Readable;
  /** Removes the bytes (retention); the record stays, marked expired. */
  removeContents(tx: Executor, file: StoredFileRow): Promise<void>;
}

export interface FileStoreConfig {
  /** Default "postgres". */
  backend?: "postgres" | "filesystem";
  /** The shared directory of the filesystem backend (RESULT_DIR). */
  directory?: string;
}

type FramedFile = Pick<StoredFileRow, "contentEncoding" | "gzipFraming">;

/**
 * A part's bytes as stored: as they are, or for a gzip file raw DEFLATE data with its trailer. A
 * gzip file begun before migration 0032 (an export running through the upgrade) goes on with
 * members, so that all its parts are alike.
 */
export function encodePart(file: FramedFile, text: string | Uint8Array): Buffer {
  const bytes =
    typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  if (file.contentEncoding !== "gzip") return bytes;
  return file.gzipFraming === "members" ? gzipSync(bytes) : deflatePart(bytes);
}

/** Whether the file's parts are read as one gzip stream: then each must reach it whole (its trailer). */
export function isGzipStreamFile(file: FramedFile): boolean {
  return file.contentEncoding === "gzip" && file.gzipFraming === "stream";
}

/** The file's bytes from its stored parts (each chunk of `parts` one whole part). */
export function framedParts(file: FramedFile, parts: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  return isGzipStreamFile(file) ? gzipStream(parts) : parts;
}

/** A reader for the store's database, passed where a store needs to read outside a transaction. */
export type FileStoreDatabase = Database;
