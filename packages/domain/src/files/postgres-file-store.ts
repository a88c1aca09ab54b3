import { Readable } from "node:stream";
import { and, eq, sql } from "drizzle-orm";
import { rawClientOf, storedFileParts, storedFiles, type Database, type Executor } from "@studyflow/db";
import { HEADER_PART, encodePart, type FileStore, type StoredFileRow } from "./file-store";

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
      expiresAt: file.expiresAt ?? null,
    })
    .returning();
  if (!row) throw new Error("stored file insert returned nothing");
  return row;
}

/** Marks a file complete with its size and rows; shared by both backends. */
export async function markComplete(tx: Executor, fileId: string, size: number, rows: number): Promise<StoredFileRow> {
  const [row] = await tx
    .update(storedFiles)
    .set({ complete: true, size, rows })
    .where(eq(storedFiles.id, fileId))
    .returning();
  if (!row) throw new Error(`stored file ${fileId} does not exist`);
  return row;
}

/** The PostgreSQL backend (see FileStore for why it is the default). */
export function createPostgresFileStore(db: Database): FileStore {
  return {
    backend: "postgres",
    create: insertStoredFile,

    async writePart(tx, file, key, text, meta) {
      const data = encodePart(file, text);
      await tx
        .insert(storedFileParts)
        .values({
          fileId: file.id,
          chunkIndex: key.chunkIndex,
          seq: key.seq,
          rows: meta.rows,
          separator: meta.separator ?? false,
          data,
        })
        .onConflictDoUpdate({
          target: [storedFileParts.fileId, storedFileParts.chunkIndex, storedFileParts.seq],
          set: { data, rows: meta.rows, separator: meta.separator ?? false },
        });
    },

    async complete(tx, fileId, rows) {
      await tx.execute(sql`
        delete from stored_file_parts p
        where p.file_id = ${fileId} and p.separator
          and not exists (
            select 1 from stored_file_parts d
            where d.file_id = ${fileId} and d.rows > 0 and (d.chunk_index, d.seq) < (p.chunk_index, p.seq))`);
      const [sized] = await tx.execute<{ size: string | number }>(
        sql`select coalesce(sum(octet_length(data)), 0) as size from stored_file_parts where file_id = ${fileId}`,
      );
      return markComplete(tx, fileId, Number(sized?.size ?? 0), rows);
    },

    read(file) {
      // Pulls one part per read() by keyset on the primary key: the stream's consumer sets the pace
      // (backpressure), and no more than one part is in memory.
      let after = { chunkIndex: HEADER_PART.chunkIndex - 1, seq: 0 };
      const nextPart = async (): Promise<Buffer | null> => {
        for (;;) {
          const [part] = await rawClientOf(db)<{ chunk_index: number; seq: string; data: Buffer }[]>`
            select chunk_index, seq, data from stored_file_parts
            where file_id = ${file.id} and (chunk_index, seq) > (${after.chunkIndex}, ${after.seq})
            order by chunk_index, seq limit 1`;
          if (!part) return null;
          after = { chunkIndex: part.chunk_index, seq: Number(part.seq) };
          // an empty part (a csv footer) is skipped: pushing zero bytes would not ask for more
          if (part.data.length > 0) return part.data;
        }
      };
      const stream = new Readable({
        read() {
          nextPart().then(
            (data) => stream.push(data),
            (error: unknown) => stream.destroy(error as Error),
          );
        },
      });
      return stream;
    },

    async removeContents(tx, file) {
      await tx.delete(storedFileParts).where(and(eq(storedFileParts.fileId, file.id)));
    },
  };
}
