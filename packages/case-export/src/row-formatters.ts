/**
 * The two file layouts the export formatters share — a CSV file (header, then one text per row) and
 * a JSON document wrapping an array of rows — so that each formatter says only how a row is written
 * and the batch bookkeeping (separators, row and mismatch counts) lives in one place.
 */
import type { BatchCounts, ByteSink, ExportFormatter, FormattedBatch, TextSink } from "./types";

/**
 * Writes one row. It calls `mismatch` when the row does not fit the file (a key the header lacks,
 * a response to another survey version), which counts it into the batch's mismatches.
 */
export type RowWriter<Row> = (row: Row, mismatch: () => void) => string;

/** `format` from `write`: the batch's pieces joined into one text. */
export function joinedText<Row>(
  write: (batch: readonly Row[], leadingSeparator: boolean, sink: TextSink) => BatchCounts,
): ExportFormatter<Row>["format"] {
  return (batch, leadingSeparator): FormattedBatch => {
    let text = "";
    const counts = write(batch, leadingSeparator, (piece) => {
      text += piece;
    });
    return { text, ...counts };
  };
}

/** Writes one row as UTF-8 into `out`: the bytes of what the row's RowWriter returns. */
export type RowBytesWriter<Row> = (row: Row, mismatch: () => void, out: ByteSink) => void;

/**
 * A CSV file: `header` (ending in a newline), then each row's text, which ends in its own newline(s).
 * `writeRowBytes`, when given, writes the same bytes as `writeRow` (ExportFormatter.writeBytes).
 */
export function csvFormatter<Row>(
  header: string,
  writeRow: RowWriter<Row>,
  writeRowBytes?: RowBytesWriter<Row>,
): ExportFormatter<Row> {
  const counted = <Out>(each: (row: Row, mismatch: () => void, out: Out) => void) => {
    return (batch: readonly Row[], _leadingSeparator: boolean, out: Out): BatchCounts => {
      let mismatches = 0;
      const mismatch = () => {
        mismatches++;
      };
      for (const row of batch) each(row, mismatch, out);
      return { rows: batch.length, mismatches };
    };
  };
  const write = counted<TextSink>((row, mismatch, sink) => sink(writeRow(row, mismatch)));
  return {
    contentType: "text/csv",
    extension: ".csv",
    start: () => header,
    write,
    ...(writeRowBytes ? { writeBytes: counted(writeRowBytes) } : {}),
    format: joinedText(write),
    end: () => "",
  };
}

/** A JSON document `opening` row, row, … `]}`: CASE's object with one array of rows. */
export function jsonArrayFormatter<Row>(opening: string, writeRow: RowWriter<Row>): ExportFormatter<Row> {
  const write = (batch: readonly Row[], leadingSeparator: boolean, sink: TextSink): BatchCounts => {
    let mismatches = 0;
    const mismatch = () => {
      mismatches++;
    };
    for (let i = 0; i < batch.length; i++) sink((i > 0 || leadingSeparator ? "," : "") + writeRow(batch[i]!, mismatch));
    return { rows: batch.length, mismatches };
  };
  return {
    contentType: "application/json",
    extension: ".json",
    start: () => opening,
    write,
    format: joinedText(write),
    end: () => "]}",
  };
}
