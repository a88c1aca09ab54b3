import { createReadStream } from "node:fs";
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { encodePart, framedParts, isGzipStreamFile, type FileStore, type PartKey } from "./file-store";
import { insertStoredFile, isGzipStreamById, markComplete } from "./postgres-file-store";

/**
 * Part file names sort in part order: the chunk index shifted to be non-negative and the seq,
 * both zero-padded; a separator part is marked in its name.
 */
function partName(key: PartKey, separator: boolean): string {
  const chunk = String(key.chunkIndex + 1).padStart(10, "0");
  const seq = String(key.seq + 1).padStart(15, "0");
  return `${chunk}-${seq}${separator ? ".sep" : ""}.part`;
}

const DATA_PART = /^(\d{10})-(\d{15})\.part$/;

/** A gzip stream part's uncompressed length: the last 4 bytes of its trailer (gzip-stream.ts). */
async function uncompressedLength(file: string, bytes: number): Promise<number> {
  const handle = await open(file, "r");
  try {
    const { buffer } = await handle.read(Buffer.alloc(4), 0, 4, bytes - 4);
    return buffer.readUInt32LE(0);
  } finally {
    await handle.close();
  }
}

/**
 * The filesystem backend: a file's parts in `<directory>/files/<file id>/`, on a volume every
 * process mounts. Parts are written to a temporary name and renamed, so a reader never sees half a
 * part; a part's name comes from its key, so a batch retried after a crash replaces its own part.
 * The write is not in the batch's transaction: a crash after the rename and before the commit
 * leaves a part the retried batch overwrites with the same rows.
 */
export function createFilesystemFileStore(directory: string): FileStore {
  const folderOf = (fileId: string) => path.join(directory, "files", fileId);
  const sortedParts = async (fileId: string) => {
    try {
      return (await readdir(folderOf(fileId))).filter((name) => name.endsWith(".part")).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  };
  return {
    backend: "filesystem",
    create: insertStoredFile,

    async writePart(_tx, file, key, text, meta) {
      const folder = folderOf(file.id);
      await mkdir(folder, { recursive: true });
      const target = path.join(folder, partName(key, meta.separator ?? false));
      const temporary = `${target}.${process.pid}.tmp`;
      await writeFile(temporary, encodePart(file, text));
      await rename(temporary, target);
    },

    async complete(tx, fileId, rows) {
      const parts = await sortedParts(fileId);
      // a data part is one with rows: header and footer sit at chunk indexes 0 and the last
      const firstData = parts.find((name) => {
        const match = DATA_PART.exec(name);
        return match && match[1] !== "0000000000" && match[1] !== String(2_147_483_648).padStart(10, "0");
      });
      const stream = await isGzipStreamById(tx, fileId);
      let size = 0;
      let nonEmpty = 0;
      let plain = 0;
      for (const name of parts) {
        const full = path.join(folderOf(fileId), name);
        if (name.endsWith(".sep.part") && (!firstData || name < firstData)) {
          await rm(full);
          continue;
        }
        const bytes = (await stat(full)).size;
        size += bytes;
        if (bytes === 0) continue;
        nonEmpty++;
        if (stream) plain += await uncompressedLength(full, bytes);
      }
      return markComplete(tx, fileId, rows, { bytes: size, parts: nonEmpty, ...(stream ? { plainBytes: plain } : {}) });
    },

    read(file) {
      const folder = folderOf(file.id);
      let parts: string[] | undefined;
      let next = 0;
      // One part file open at a time, streamed through: the consumer's pace sets the reads. A gzip
      // stream's parts are read whole (a batch's part, a few MB at most): each ends in its trailer.
      const whole = isGzipStreamFile(file);
      async function* bytes() {
        parts ??= await sortedParts(file.id);
        while (next < parts.length) {
          const name = parts[next++] as string;
          if (whole) {
            const part = await readFile(path.join(folder, name));
            if (part.length > 0) yield part;
          } else {
            for await (const chunk of createReadStream(path.join(folder, name))) yield chunk as Buffer;
          }
        }
      }
      return Readable.from(framedParts(file, bytes()), { objectMode: false });
    },

    async removeContents(_tx, file) {
      await rm(folderOf(file.id), { recursive: true, force: true });
    },
  };
}
