import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream";
import { createGunzip } from "node:zlib";

/**
 * Reading a `mongodump` directory: one folder per database, each collection a `<name>.bson` (or
 * `<name>.bson.gz` under `--gzip`) of BSON documents back to back, beside its
 * `<name>.metadata.json(.gz)`. Documents are handed out one at a time as their bytes, so a
 * collection of any size is read in the memory of its largest document.
 */

/** Larger than any document MongoDB stores (16 MiB); a length past it means the file is damaged. */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
/** The smallest BSON document: its length and the closing zero. */
const MIN_DOCUMENT_BYTES = 5;

export interface DumpCollectionFile {
  database: string;
  collection: string;
  path: string;
  gzip: boolean;
  /** The file's size on disk (compressed when gzip). */
  bytes: number;
}

/** A document's bytes and its position in the collection (0 for the first). */
export interface DumpDocument {
  index: number;
  bytes: Buffer;
}

/** The file ends inside a document, or a length cannot be a document's: what follows cannot be read. */
export class DumpFileDamaged extends Error {
  constructor(
    readonly file: string,
    readonly index: number,
    reason: string,
  ) {
    super(`${file}: ${reason} at document ${index}; the documents after it cannot be read`);
    this.name = "DumpFileDamaged";
  }
}

/** The collection's dump file, plain or gzip; undefined when the dump has no such collection. */
export async function findDumpCollection(
  dumpDir: string,
  database: string,
  collection: string,
): Promise<DumpCollectionFile | undefined> {
  for (const gzip of [false, true]) {
    const path = join(dumpDir, database, `${collection}.bson${gzip ? ".gz" : ""}`);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile()) return { database, collection, path, gzip, bytes: info.size };
  }
  return undefined;
}

/** The collections a database folder of the dump holds, by name; none when the folder is missing. */
export async function listDumpCollections(dumpDir: string, database: string): Promise<string[]> {
  const entries = await readdir(join(dumpDir, database)).catch(() => [] as string[]);
  const names = entries.flatMap((entry) => /^(.+)\.bson(\.gz)?$/.exec(entry)?.[1] ?? []);
  return [...new Set(names)].sort();
}

/** Bytes read from the file so far (compressed bytes for a gzip file): the progress of a read. */
export interface ReadProgress {
  fileBytesRead: number;
}

/**
 * The documents of a collection file in order, as raw BSON. The byte stream is split by each
 * document's int32 length; chunks are joined only when a document spans them.
 *
 * @throws DumpFileDamaged when a length is impossible or the file ends inside a document.
 */
export async function* readDumpDocuments(
  file: DumpCollectionFile,
  progress: ReadProgress = { fileBytesRead: 0 },
): AsyncGenerator<DumpDocument> {
  const raw = createReadStream(file.path, { highWaterMark: 1024 * 1024 });
  let source: AsyncIterable<Buffer> = raw;
  if (file.gzip) {
    const gunzip = createGunzip();
    raw.on("data", (chunk) => {
      progress.fileBytesRead += chunk.length;
    });
    // pipeline destroys both streams with the error of either, so a read error ends the loop below
    pipeline(raw, gunzip, () => undefined);
    source = gunzip;
  }
  const chunks: Buffer[] = [];
  let buffered = 0;
  let index = 0;
  try {
    for await (const chunk of source) {
      if (!file.gzip) progress.fileBytesRead += chunk.length;
      chunks.push(chunk);
      buffered += chunk.length;
      while (buffered >= 4) {
        if (chunks[0]!.length < 4) chunks.splice(0, chunks.length, Buffer.concat(chunks));
        const size = chunks[0]!.readInt32LE(0);
        if (size < MIN_DOCUMENT_BYTES || size > MAX_DOCUMENT_BYTES) {
          throw new DumpFileDamaged(file.path, index, `a document length of ${size} bytes`);
        }
        if (buffered < size) break;
        if (chunks[0]!.length < size) chunks.splice(0, chunks.length, Buffer.concat(chunks));
        const head = chunks[0]!;
        const bytes = head.subarray(0, size);
        if (head.length === size) chunks.shift();
        else chunks[0] = head.subarray(size);
        buffered -= size;
        yield { index, bytes };
        index += 1;
      }
    }
  } finally {
    raw.destroy();
  }
  if (buffered > 0) throw new DumpFileDamaged(file.path, index, `the file ends ${buffered} bytes into a document`);
}
