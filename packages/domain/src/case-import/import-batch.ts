import type { ClockContext } from "../foundation/clock";
import type { Database, Executor } from "@studyflow/db";
import type { CaseDocument } from "./case-values";

/** One document of a batch: its place in the collection, bytes and what the bson package read. */
export interface BatchDocument {
  index: number;
  bytes: Buffer;
  document: CaseDocument;
}

/**
 * What became of one document. `ignored`: not asked for (another study than `--study`). A `note`
 * goes to the report although the document was taken (a file whose bytes did not come along).
 */
export type DocumentOutcome =
  { kind: "inserted" | "updated" | "unchanged" | "ignored"; note?: string } | { kind: "skipped"; reason: string };

export const INSERTED: DocumentOutcome = { kind: "inserted" };
export const UPDATED: DocumentOutcome = { kind: "updated" };
export const UNCHANGED: DocumentOutcome = { kind: "unchanged" };
export const IGNORED: DocumentOutcome = { kind: "ignored" };
export const skipped = (reason: string): DocumentOutcome => ({ kind: "skipped", reason });

/** The outcome with a line for the report. */
export const noted = (outcome: DocumentOutcome, note: string | undefined): DocumentOutcome =>
  note === undefined || outcome.kind === "skipped" ? outcome : { ...outcome, note };

/**
 * How one collection's documents become studyflow rows: one call per batch, inside the batch's
 * transaction. It reads what studyflow has and decides each document's outcome; it writes only
 * when `write` (a dry run decides the same and writes nothing). Outcomes come back in the
 * batch's order.
 */
export interface CollectionImporter {
  importBatch: (tx: Executor, batch: readonly BatchDocument[], write: boolean) => Promise<DocumentOutcome[]>;
  /**
   * The same in two steps, for the large collections: the batch's own work (documents into rows)
   * first, outside any transaction, while the previous batch's writes are still running; then
   * its database work in the batch's transaction.
   */
  prepareBatch?: (batch: readonly BatchDocument[]) => Promise<PreparedBatch>;
  /** Array fields whose documents the importer reads from their bytes (see deserializeCaseDocument). */
  rawFields?: Readonly<Record<string, boolean>>;
  /** What earlier imports of the collection brought in, to find what a newer dump no longer has (import-absent). */
  absent?: AbsentRows;
}

/** A row an earlier import brought in, by the id its document had (the record's source id). */
export interface ImportedEntry {
  sourceId: string;
  targetId: string;
}

/**
 * What a collection's earlier imports brought in, to find after a whole pass over its file the rows
 * whose documents a newer dump no longer has (see import-absent).
 */
export interface AbsentRows {
  /** What the report calls one: "account", "researcher". */
  noun: string;
  /** The source id a document of the collection gives its row; undefined when it gives none. */
  sourceIdOf: (document: CaseDocument) => string | undefined;
  /** What earlier imports of this collection brought in. */
  imported: (db: Executor) => Promise<ImportedEntry[]>;
  /** Removes one entry's row and its record, in transactions of its own. Without it, absent rows are only reported. */
  remove?: (db: Database, entry: ImportedEntry, ctx: ClockContext) => Promise<void>;
  /** What the report tells the operator to do when there is no `remove`. */
  advice?: (entry: ImportedEntry) => string;
}

/**
 * Documents between two turns of the event loop while a batch is read and prepared: the previous
 * batch's transaction goes on only when its statements' answers are read, so a batch's own work
 * gives way to it every few milliseconds.
 */
export const DOCUMENTS_PER_TURN = 64;

/** A batch read into rows, waiting for its transaction. */
export type PreparedBatch = (tx: Executor, write: boolean) => Promise<DocumentOutcome[]>;

/** The operator who does what the import writes, in the audit log and `*_by` columns. */
export const IMPORT_ACTOR = "case-import";
