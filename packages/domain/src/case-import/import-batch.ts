import type { Executor } from "@studyflow/db";
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
}

/** The operator who does what the import writes, in the audit log and `*_by` columns. */
export const IMPORT_ACTOR = "case-import";
