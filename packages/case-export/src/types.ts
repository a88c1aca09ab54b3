/** One stored version of a survey, as studyflow keeps it. Times in Unix seconds. */
export interface SurveyVersionInput {
  versionId: string;
  publishedAt: number;
  unpublishedAt: number | null;
  /** The survey JSON as uploaded (case-editor-tools shape: {versionId?, surveyDefinition:{key, items...}, props...}). */
  definition: Record<string, unknown>;
}

export type ResponseExportFormat = "wide" | "long" | "json";

/** CASE's `questionOptionSep` when the query does not name one. */
export const DEFAULT_QUESTION_OPTION_SEP = "-";

/**
 * Per-question meta columns, as CASE's IncludeMeta: `<question><sep>metaPosition`,
 * `…metaInit`, `…metaDisplayed`, `…metaResponse`. CASE's HTTP API never turns them on (its query
 * parser leaves them false); they are here for callers that want them.
 */
export interface IncludeMeta {
  position: boolean;
  initTimes: boolean;
  displayedTimes: boolean;
  responsedTimes: boolean;
}

export interface ResponseExportOptions {
  format: ResponseExportFormat;
  /** Between a question key and its slot/option in column names. @defaultValue CASE's "-" ({@link DEFAULT_QUESTION_OPTION_SEP}) */
  questionOptionSep: string;
  /** Drop the `<surveyKey>.` prefix of item keys in column names. */
  shortKeys: boolean;
  /** Context keys written after CASE's `language`, `engineVersion`, `session` (`accountID`/`mainProfile` are always dropped). */
  extraContextColumns: string[];
  includeMeta: IncludeMeta;
  /** The study's track-account flag at export time: adds exactly CASE's account columns. */
  accountColumns: boolean;
  /**
   * Not in CASE: prefix `'` to the CSV cells a participant's client filled (answers, context, the
   * version id, meta) when they start with `=`, `+`, `-`, `@`, tab or CR and are no plain number,
   * so that spreadsheet programs do not run participants' text as formulas. The header and the ids
   * are never touched. Off here, so that this package writes CASE's bytes unless asked; studyflow's
   * export requests turn it on unless the researcher says `guardFormulas=false`. @defaultValue false
   */
  guardFormulas?: boolean;
  /** The clock of CASE's version lookup by time, in Unix seconds: the caller's now. */
  now: number;
}

/** A stored response (studyflow's survey_responses row) plus, when accountColumns, its participant's account info. */
export interface ExportResponse {
  id: string;
  participantId: string;
  key: string;
  versionId: string;
  openedAt: number;
  submittedAt: number;
  arrivedAt: number;
  /**
   * survey-engine SurveyItemResponse[] as submitted; or its JSON text as PostgreSQL's jsonb writes
   * it, which the formatter reads itself, building only what the export's columns read (a JSON
   * `null` reads as no responses).
   */
  responses: unknown[] | string;
  context: Record<string, string>;
  /** The participant's hashed account id and main-profile flag; null/absent parts are written as "". */
  account?: { accountId: string | null; mainProfile: boolean | null } | null;
}

/** Receives a batch's text piece by piece, in order (ExportFormatter.write). */
export type TextSink = (piece: string) => void;

/**
 * UTF-8 output a formatter writes into directly (ExportFormatter.writeBytes): text it encodes as it
 * goes, bytes it encoded once (a column's name), and again bytes it has just written (the long
 * format repeats a response's leading cells on each of its lines).
 */
export interface ByteSink {
  /** Bytes written so far: where the next write starts, an offset for `again`. */
  readonly length: number;
  /** Appends `piece` as UTF-8. */
  text(piece: string): void;
  /** Appends `bytes`. */
  bytes(bytes: Uint8Array): void;
  /** Appends one byte. */
  byte(value: number): void;
  /** Appends again the bytes written from offset `from` up to `to`. */
  again(from: number, to: number): void;
}

/** What a batch wrote besides its text. */
export type BatchCounts = Omit<FormattedBatch, "text">;

export interface FormattedBatch {
  text: string;
  /**
   * Records written: what `leadingSeparator` and `end(wroteRows)` count. One per response,
   * participant or report (a response in the long format still counts once); one per answered slot
   * in the confidential export.
   */
  rows: number;
  /** Rows that did not match their definition (exported as far as possible, never thrown). */
  mismatches: number;
}

/**
 * A file written in batches: `start() + format(b1, false) + format(b2, true) + … + end()` is one
 * file, equal to formatting all rows in one batch. Stateless between calls, so a resumed export can
 * continue a file with a new formatter.
 */
export interface ExportFormatter<Row> {
  /** As CASE's task fileType: "text/csv" or "application/json". */
  readonly contentType: string;
  /** ".csv" or ".json" */
  readonly extension: string;
  /** Everything before the first row: the CSV header line, or the JSON opening. */
  start(): string;
  /**
   * The text of a batch of rows, in order. `leadingSeparator` (JSON only): whether the first row of
   * this batch follows an earlier row (false only for the very first row of the file).
   */
  format(batch: readonly Row[], leadingSeparator: boolean): FormattedBatch;
  /**
   * The same text as `format`, handed to `sink` in pieces (a record or less each) instead of joined:
   * an exporter encodes each piece as it comes, never building the batch's text as one string.
   */
  write(batch: readonly Row[], leadingSeparator: boolean, sink: TextSink): BatchCounts;
  /**
   * Where a format has it: the same text as `write`, as UTF-8 written into `out`. The long CSV has
   * it: a response's lines share their first cells, which are then encoded once, and no line is
   * built as a string.
   */
  readonly writeBytes?: (batch: readonly Row[], leadingSeparator: boolean, out: ByteSink) => BatchCounts;
  /**
   * Everything after the last row (JSON closing; "" for CSV). `wroteRows` matters only where CASE's
   * empty file differs from a file whose rows were all removed (indented JSON). @defaultValue true
   */
  end(wroteRows?: boolean): string;
}

export type ResponseFormatter = ExportFormatter<ExportResponse>;
