import { eq } from "drizzle-orm";
import type { SQL } from "drizzle-orm";
import type { BatchCounts, ByteSink, ExportFormatter } from "@studyflow/case-export";
import { storedFiles, type Executor } from "@studyflow/db";
import type { BatchTally, TaskKindDefinition } from "../tasks/task-kind";
import { FOOTER_PART, HEADER_PART, separatorPart, type FileStore, type StoredFileRow } from "../files/file-store";
import type { TaskRow } from "../tasks/task-row";
import { countSelection, selectionBoundaries, streamSelection, type ExportSelection } from "./export-keyset";
import { EXPORT_BATCH_SIZE, EXPORT_CHUNK_SIZE } from "./export-tuning";

/** Rows formatted together while a batch streams in (sliceFormatter). */
export const FORMAT_SLICE = 64;

/** Pieces up to this many UTF-16 units are tried as ASCII by a loop here, not a call into Buffer.write. */
const SHORT_PIECE = 24;

/**
 * Text written as UTF-8 into one buffer, piece by piece, the buffer doubling when a piece may not
 * fit. A batch's text is never one string: a long CSV batch is 4 MB made of some 120,000
 * concatenations, and encoding that string (flattening it first) cost the workers more than
 * formatting it did. A record's text is encoded while it is small and new. One buffer serves a
 * chunk's batches one after the other (`reset`): a buffer of its own per batch, outside V8's heap,
 * made the collector run its full collections more often.
 *
 * It is also the ByteSink a formatter with `writeBytes` writes into (the long CSV): a short piece
 * that is all ASCII (most cells) is copied by a loop, without a call into Buffer.write, and bytes
 * written before are copied again within the buffer.
 */
export class Utf8Text implements ByteSink {
  private buffer: Buffer;
  private used = 0;

  constructor(capacity = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(Math.max(1024, capacity));
  }

  /** Room for `more` bytes after those written. */
  private reserve(more: number): Buffer {
    const needed = this.used + more;
    if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.used);
      this.buffer = grown;
    }
    return this.buffer;
  }

  /** `text` as a function of its own (a formatter's TextSink). */
  readonly write = (piece: string): void => this.text(piece);

  get length(): number {
    return this.used;
  }

  text(piece: string): void {
    const units = piece.length;
    if (units === 0) return;
    // a UTF-16 code unit is at most 3 bytes of UTF-8
    const buffer = this.reserve(units * 3);
    if (units <= SHORT_PIECE) {
      const at = this.used;
      let i = 0;
      for (; i < units; i++) {
        const unit = piece.charCodeAt(i);
        if (unit >= 0x80) break;
        buffer[at + i] = unit;
      }
      if (i === units) {
        this.used += units;
        return;
      }
      // not all ASCII: the whole piece again, over what the loop wrote
    }
    this.used += buffer.write(piece, this.used, "utf8");
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length).set(bytes, this.used);
    this.used += bytes.length;
  }

  byte(value: number): void {
    this.reserve(1)[this.used++] = value;
  }

  again(from: number, to: number): void {
    this.reserve(to - from).copyWithin(this.used, from, to);
    this.used += to - from;
  }

  /** The bytes written since the last reset: a view of the buffer, valid until the next reset. */
  get written(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** Starts over, keeping the buffer. */
  reset(): void {
    this.used = 0;
  }
}

/** A batch as sliceFormatter gives it: its text as UTF-8 bytes and its counts. */
export interface FormattedBytes extends BatchCounts {
  /** A view of the caller's Utf8Text, valid until its next reset. */
  bytes: Buffer;
}

/**
 * Formats a batch's rows as they are pushed, `slice` at a time, into the bytes of the text that
 * `formatter.format(rows, leadingSeparator)` gives for all of them at once: a slice's first row
 * follows an earlier row when the batch's first did or an earlier slice wrote a record. A row read
 * (a response's JSON text is a few KB) is then garbage before the next slice arrives. Held until
 * the whole batch was formatted, a batch's rows outlived the young generation's collections, each
 * of which copied them again, and the read-ahead batch beside them doubled that. Each record's
 * text is encoded into `text` (reset first) as the formatter writes it, or written there as bytes by a
 * formatter that has `writeBytes`.
 */
export function sliceFormatter<Row>(
  formatter: ExportFormatter<Row>,
  leadingSeparator: boolean,
  text: Utf8Text = new Utf8Text(),
  slice = FORMAT_SLICE,
) {
  let pending: Row[] = [];
  text.reset();
  const counts: BatchCounts = { rows: 0, mismatches: 0 };
  const flush = () => {
    if (pending.length === 0) return;
    const following = leadingSeparator || counts.rows > 0;
    const written = formatter.writeBytes
      ? formatter.writeBytes(pending, following, text)
      : formatter.write(pending, following, text.write);
    counts.rows += written.rows;
    counts.mismatches += written.mismatches;
    pending = [];
  };
  return {
    push(row: Row) {
      pending.push(row);
      if (pending.length >= slice) flush();
    },
    finish(): FormattedBytes {
      flush();
      return { bytes: text.written, ...counts };
    },
  };
}

/** What an export kind knows of its rows; the chunk loop, parts and file are shared (exportKind). */
export interface ExportSource<Row> {
  /** The rows of this task's export, in its order. */
  selection(tx: Executor, task: TaskRow): Promise<ExportSelection>;
  /** The select list of a batch read. */
  columns(task: TaskRow): SQL;
  /** A read row as the formatter takes it. */
  toExportRow(row: Record<string, unknown>): Row;
  /** The task's formatter; the same for every chunk and for finalisation (it is stateless). */
  formatter(tx: Executor, task: TaskRow): Promise<ExportFormatter<Row>>;
  /** The download's name without extension, e.g. `responses_intake_20260131-120000`. */
  baseName(task: TaskRow): string;
  /** Whether the researcher asked for a .gz file (every export is stored compressed either way). */
  gzip(task: TaskRow): boolean;
  /** Fixes what every chunk must agree on before the first one runs; returns the task as updated. */
  beforePlan?(tx: Executor, task: TaskRow): Promise<TaskRow>;
}

/**
 * The text that joins a row to the rows before it (JSON's comma; "" for CSV), learnt from the
 * formatter itself: a row formatted as following another minus the same row formatted as first.
 */
function separatorOf<Row>(formatter: ExportFormatter<Row>, row: Row): string {
  const following = formatter.format([row], true).text;
  const first = formatter.format([row], false).text;
  return following.endsWith(first) ? following.slice(0, following.length - first.length) : "";
}

export async function fileOfTask(tx: Executor, taskId: string): Promise<StoredFileRow> {
  const [file] = await tx.select().from(storedFiles).where(eq(storedFiles.taskId, taskId)).limit(1);
  if (!file) throw new Error(`the export file of task ${taskId} does not exist`);
  return file;
}

const timestampOf = (date: Date) => date.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
/** A key safe in a file name: anything but letters, digits, dot, dash and underscore becomes "_". */
export const fileNamePart = (value: string) => value.replace(/[^A-Za-z0-9._-]/g, "_");
export const exportTimestamp = timestampOf;

/**
 * A task kind that streams its rows into a stored file. Each batch reads the next rows of its
 * chunk by keyset, formats them and writes one part, keyed by (chunk, rows of the chunk before
 * it), in the transaction that moves the checkpoint: a batch redone after a crash writes the same
 * part again, never a second one. A JSON array's separator before a chunk's first row is a part
 * of its own; completing the file drops the one before the file's first row, so the file reads as
 * if formatted at once, whichever chunks were empty. The header (`start()`) and footer (`end()`)
 * are written when the last chunk finishes.
 */
export function exportKind<Row>(source: ExportSource<Row>): TaskKindDefinition {
  return {
    writesParticipants: false,
    skipWhenBusy: false,
    chunkSize: EXPORT_CHUNK_SIZE,
    batchSize: EXPORT_BATCH_SIZE,

    async plan(tx, planned, chunkSize) {
      const task = source.beforePlan ? await source.beforePlan(tx, planned) : planned;
      const selection = await source.selection(tx, task);
      const targetCount = await countSelection(tx, selection);
      const boundaries = targetCount > chunkSize ? await selectionBoundaries(tx, selection, chunkSize) : [];
      return { targetCount, boundaries };
    },

    async afterPlan(tx, task, _chunkCount, files: FileStore) {
      const formatter = await source.formatter(tx, task);
      // Every export file is stored gzip-compressed (a long CSV in a twentieth of its bytes, written,
      // kept and sent as such); its name says whether the researcher asked for a .gz file, or for
      // the file itself, which a download sends decompressed where the client does not take gzip.
      await files.create(tx, {
        studyKey: task.studyKey,
        taskId: task.id,
        name: `${source.baseName(task)}${formatter.extension}${source.gzip(task) ? ".gz" : ""}`,
        contentType: formatter.contentType,
        gzip: true,
      });
    },

    async openChunk(db, task, options) {
      const files = options.files;
      if (!files) throw new Error("an export chunk needs a file store");
      const selection = await source.selection(db, task);
      const formatter = await source.formatter(db, task);
      const file = await fileOfTask(db, task.id);
      const columns = source.columns(task);
      // the chunk's batches run one after another, each done with its bytes once its part is written
      const text = new Utf8Text();
      return {
        async runBatch(tx, { chunkIndex, chunk, batchSize }) {
          const range = { after: chunk.cursor, upTo: chunk.to_key, limit: batchSize };
          const firstOfChunk = chunk.processed_count === 0;
          // Rows are formatted as they arrive from the server, a slice at a time (sliceFormatter).
          const batch = sliceFormatter(formatter, !firstOfChunk, text);
          let first: Row | undefined;
          const { count, lastKey } = await streamSelection(tx, selection, columns, range, (row) => {
            const exportRow = source.toExportRow(row);
            first ??= exportRow;
            batch.push(exportRow);
          });
          const formatted = batch.finish();
          const tally: BatchTally = { processed: count, changedPerRule: [], errors: [], errorCount: 0 };
          if (first !== undefined) {
            if (firstOfChunk && chunkIndex > 0) {
              const separator = separatorOf(formatter, first);
              if (separator !== "")
                await files.writePart(tx, file, separatorPart(chunkIndex), separator, { rows: 0, separator: true });
            }
            await files.writePart(tx, file, { chunkIndex, seq: chunk.processed_count }, formatted.bytes, {
              rows: formatted.rows,
            });
            // rows that did not match their survey definition are exported as far as possible and counted
            tally.errorCount = formatted.mismatches;
          }
          // a chunk whose batch ends on its upper bound is done: the batch after it would read nothing
          const finished = count < batchSize || (lastKey !== null && lastKey === chunk.to_key);
          return { last: lastKey ?? chunk.cursor, finished, tally, ranIn: "export" };
        },
      };
    },

    async finalize(tx, task, chunks, context) {
      const formatter = await source.formatter(tx, task);
      const file = await fileOfTask(tx, task.id);
      const rows = chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0);
      await context.files.writePart(tx, file, HEADER_PART, formatter.start(), { rows: 0 });
      await context.files.writePart(tx, file, FOOTER_PART, formatter.end(rows > 0), { rows: 0 });
      const completed = await context.files.complete(tx, file.id, rows);
      return { resultFile: completed.name, processedCount: rows, fileType: completed.contentType };
    },
  };
}
