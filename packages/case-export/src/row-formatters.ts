/**
 * The two file layouts the export formatters share — a CSV file (header, then one text per row) and
 * a JSON document wrapping an array of rows — so that each formatter says only how a row is written
 * and the batch bookkeeping (separators, row and mismatch counts) lives in one place.
 */
import type { ExportFormatter } from "./types";

/**
 * Writes one row. It calls `mismatch` when the row does not fit the file (a key the header lacks,
 * a response to another survey version), which counts it into the batch's mismatches.
 */
export type RowWriter<Row> = (row: Row, mismatch: () => void) => string;

/** A CSV file: `header` (ending in a newline), then each row's text, which ends in its own newline(s). */
export function csvFormatter<Row>(header: string, writeRow: RowWriter<Row>): ExportFormatter<Row> {
  return {
    contentType: "text/csv",
    extension: ".csv",
    start: () => header,
    format(batch) {
      let text = "";
      let mismatches = 0;
      const mismatch = () => {
        mismatches++;
      };
      for (const row of batch) text += writeRow(row, mismatch);
      return { text, rows: batch.length, mismatches };
    },
    end: () => "",
  };
}

/** A JSON document `opening` row, row, … `]}`: CASE's object with one array of rows. */
export function jsonArrayFormatter<Row>(opening: string, writeRow: RowWriter<Row>): ExportFormatter<Row> {
  return {
    contentType: "application/json",
    extension: ".json",
    start: () => opening,
    format(batch, leadingSeparator) {
      let text = "";
      let mismatches = 0;
      const mismatch = () => {
        mismatches++;
      };
      for (let i = 0; i < batch.length; i++)
        text += (i > 0 || leadingSeparator ? "," : "") + writeRow(batch[i]!, mismatch);
      return { text, rows: batch.length, mismatches };
    },
    end: () => "]}",
  };
}
