import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { Sql, TransactionSql } from "postgres";
import { and, eq, sql } from "drizzle-orm";
import { rawClientOf, storedFileParts, storedFiles, type Database, type Executor } from "@studyflow/db";
import {
  encodePart,
  framedParts,
  isGzipStreamFile,
  type FileStore,
  type PartKey,
  type StoredFileRow,
} from "./file-store";
import { gzipStreamSize } from "./gzip-stream";
import {
  binaryBool,
  binaryInt4,
  binaryInt8,
  binaryUuid,
  copyOutColumn,
  encodeBinaryCopy,
} from "./postgres-binary-copy";

/** The client of a transaction (drizzle's `tx`), as opposed to the pool's. */
const isTransaction = (client: Sql | TransactionSql): client is TransactionSql =>
  typeof (client as Partial<TransactionSql>).savepoint === "function";

/**
 * Parts a download reads with one COPY: consecutive parts until they hold this many bytes (a part
 * larger than that is a group of its own). Two groups are in memory at most while a file is read.
 */
export const READ_GROUP_BYTES = 4 * 1024 * 1024;

/** A part's key with its stored size, as a download lists them. */
interface SizedPart extends PartKey {
  size: number;
}

/** The file's parts, in order, cut into runs of at most READ_GROUP_BYTES (or one larger part). */
export function groupParts(parts: readonly SizedPart[]): SizedPart[][] {
  const groups: SizedPart[][] = [];
  let current: SizedPart[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (current.length > 0 && bytes + part.size > READ_GROUP_BYTES) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(part);
    bytes += part.size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** A group's values, read as slices of the messages they came in, put back together part by part. */
export function wholeParts(slices: readonly Buffer[], parts: readonly SizedPart[]): Buffer[] {
  const whole: Buffer[] = [];
  let at = 0;
  let offset = 0;
  for (const part of parts) {
    const pieces: Buffer[] = [];
    let missing = part.size;
    while (missing > 0) {
      const slice = slices[at];
      if (slice === undefined) throw new Error("a file's parts read shorter than listed");
      const take = Math.min(missing, slice.length - offset);
      pieces.push(slice.subarray(offset, offset + take));
      missing -= take;
      offset += take;
      if (offset === slice.length) {
        at++;
        offset = 0;
      }
    }
    whole.push(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
  }
  if (at < slices.length) throw new Error("a file's parts read longer than listed");
  return whole;
}

const COPY_PART_IN =
  "copy stored_file_parts (file_id, chunk_index, seq, rows, separator, data) from stdin (format binary)";

/** Creates the record of a new file; shared by both backends. */
export async function insertStoredFile(tx: Executor, file: Parameters<FileStore["create"]>[1]): Promise<StoredFileRow> {
  const [row] = await tx
    .insert(storedFiles)
    .values({
      studyKey: file.studyKey,
      taskId: file.taskId ?? null,
      name: file.name,
      contentType: file.contentType,
      contentEncoding: file.gzip ? "gzip" : null,
      gzipFraming: file.gzip ? "stream" : null,
      expiresAt: file.expiresAt ?? null,
    })
    .returning();
  if (!row) throw new Error("stored file insert returned nothing");
  return row;
}

/**
 * Marks a file complete with its rows and its size as read (a gzip stream's, from its stored bytes
 * and parts, and the size of its bytes decompressed); shared by both backends.
 */
export async function markComplete(
  tx: Executor,
  fileId: string,
  rows: number,
  stored: { bytes: number; parts: number; plainBytes?: number },
): Promise<StoredFileRow> {
  const stream = stored.plainBytes !== undefined;
  const [row] = await tx
    .update(storedFiles)
    .set({
      complete: true,
      size: stream ? gzipStreamSize(stored.bytes, stored.parts) : stored.bytes,
      plainSize: stored.plainBytes ?? null,
      rows,
    })
    .where(eq(storedFiles.id, fileId))
    .returning();
  if (!row) throw new Error(`stored file ${fileId} does not exist`);
  return row;
}

/** Whether the file's parts are a gzip stream's (each ending in its trailer). */
export async function isGzipStreamById(tx: Executor, fileId: string): Promise<boolean> {
  const [file] = await tx
    .select({ framing: storedFiles.gzipFraming })
    .from(storedFiles)
    .where(eq(storedFiles.id, fileId));
  return file?.framing === "stream";
}

/** The PostgreSQL backend (see FileStore for why it is the default). */
export function createPostgresFileStore(db: Database): FileStore {
  return {
    backend: "postgres",
    create: insertStoredFile,

    async writePart(tx, file, key, text, meta) {
      // The part's bytes go over as they are (binary COPY): a bytea parameter would travel as hex,
      // twice the bytes, encoded here and decoded by the server. COPY has no ON CONFLICT, so the
      // part a retry replaces is deleted first, in the same transaction.
      const input = encodeBinaryCopy([
        [
          binaryUuid(file.id),
          binaryInt4(key.chunkIndex),
          binaryInt8(key.seq),
          binaryInt4(meta.rows),
          binaryBool(meta.separator ?? false),
          encodePart(file, text),
        ],
      ]);
      const write = async (client: TransactionSql) => {
        await client`
          delete from stored_file_parts
          where file_id = ${file.id} and chunk_index = ${key.chunkIndex} and seq = ${key.seq}`;
        const copy = await client.unsafe(COPY_PART_IN).writable();
        copy.end(input);
        // finished once the server confirmed the COPY; a refused one (patches/postgres+3.4.9.patch)
        // ends the stream with the server's error
        await finished(copy);
      };
      const client = rawClientOf(tx);
      // A COPY needs a connection of its own: given the pool rather than a transaction, make one.
      if (isTransaction(client)) await write(client);
      else await client.begin(write);
    },

    async complete(tx, fileId, rows) {
      await tx.execute(sql`
        delete from stored_file_parts p
        where p.file_id = ${fileId} and p.separator
          and not exists (
            select 1 from stored_file_parts d
            where d.file_id = ${fileId} and d.rows > 0 and (d.chunk_index, d.seq) < (p.chunk_index, p.seq))`);
      const stream = await isGzipStreamById(tx, fileId);
      // a gzip stream's part ends in its uncompressed length (4 bytes, little-endian; gzip-stream.ts)
      const [sized] = await tx.execute<{ size: string | number; parts: string | number; plain: string | null }>(
        sql`select coalesce(sum(octet_length(data)), 0) as size, count(*) filter (where octet_length(data) > 0) as parts,
              ${
                stream
                  ? sql`coalesce(sum(get_byte(data, octet_length(data) - 4)::bigint
                      + (get_byte(data, octet_length(data) - 3)::bigint << 8)
                      + (get_byte(data, octet_length(data) - 2)::bigint << 16)
                      + (get_byte(data, octet_length(data) - 1)::bigint << 24)), 0)`
                  : sql`null`
              } as plain
            from stored_file_parts where file_id = ${fileId}`,
      );
      return markComplete(tx, fileId, rows, {
        bytes: Number(sized?.size ?? 0),
        parts: Number(sized?.parts ?? 0),
        ...(stream ? { plainBytes: Number(sized?.plain ?? 0) } : {}),
      });
    },

    read(file) {
      // Group by group of parts, as the consumer asks (backpressure), with the next group read
      // ahead. Each group is one COPY … TO STDOUT (FORMAT binary), which carries the bytes raw (a
      // bytea column read as text is hex), in a transaction of its own: postgres.js must not
      // pipeline another query onto a connection in the middle of a COPY. A group is read whole at
      // the server's pace, so a slow download holds no connection between groups. Small parts (a
      // wide CSV's are a few hundred KB) go READ_GROUP_BYTES at a time, so a file of many parts
      // does not pay a transaction and a COPY's round trips for each. COPY takes no parameters:
      // the id is checked to be a uuid, the keys are numbers.
      binaryUuid(file.id);
      const client = rawClientOf(db);
      const whole = isGzipStreamFile(file);
      async function* bytes() {
        const parts = await client<{ chunk_index: number; seq: string; size: number }[]>`
          select chunk_index, seq, octet_length(data) as size from stored_file_parts
          where file_id = ${file.id} and octet_length(data) > 0
          order by chunk_index, seq`;
        const groups = groupParts(
          parts.map((part) => ({ chunkIndex: Number(part.chunk_index), seq: Number(part.seq), size: part.size })),
        );
        const groupAt = async (index: number) => {
          const group = groups[index];
          if (group === undefined) return undefined;
          const keys = group.map((key) => `(${key.chunkIndex}, ${key.seq})`).join(", ");
          const read = await client.begin((tx) =>
            copyOutColumn(
              tx.unsafe(
                `copy (select data from stored_file_parts
                       where file_id = '${file.id}' and (chunk_index, seq) in (${keys})
                       order by chunk_index, seq)
                 to stdout (format binary)`,
              ),
            ),
          );
          if (read.rows !== group.length) throw new Error(`file ${file.id} lost a part of ${keys} while it was read`);
          // A gzip stream reads each part's trailer (gzip-stream.ts): its parts go on whole.
          return whole ? wholeParts(read.values, group) : read.values;
        };
        // The next group is read while this one goes to the consumer, so the database and the
        // download overlap: two groups in memory at most.
        let next = groupAt(0);
        for (let index = 0; ; index++) {
          const values = await next;
          if (values === undefined) return;
          next = groupAt(index + 1);
          // a read ahead nobody takes (the consumer stopped) must not end the process as unhandled
          next.catch(() => undefined);
          yield* values;
        }
      }
      return Readable.from(framedParts(file, bytes()), { objectMode: false });
    },

    async removeContents(tx, file) {
      await tx.delete(storedFileParts).where(and(eq(storedFileParts.fileId, file.id)));
    },
  };
}
