/**
 * The report export (`data-exporter/reports`): CASE's raw JSON document of reports, or its CSV with
 * one column per data key.
 */
import { csvField, csvRecord } from "./go-csv";
import { goJsonNumber, goJsonString, int64Of } from "./go-json";
import { GO_ZERO_TIME, goDateSeconds, goRfc3339 } from "./go-time";
import { csvFormatter, jsonArrayFormatter } from "./row-formatters";
import { sortedUnique } from "./survey-questions";
import type { ExportFormatter } from "./types";

/** A report row as studyflow stores it. Times in Unix seconds. */
export interface ExportReport {
  id: string;
  key: string;
  participantId: string;
  responseId: string | null;
  timestamp: number;
  /** When the report was last changed, if ever; CASE writes Go's zero time otherwise. */
  modifiedAt?: number | null;
  data: { key: string; value: string; dtype?: string }[];
}

export type ReportExportOptions =
  | { format: "json" }
  | {
      format: "csv";
      /**
       * Every data key of the reports being exported (e.g. `select distinct` over them): CASE reads
       * the reports twice to learn the header, a streamed file must know it before the first row.
       * A report with a key not listed here is written without it and counted as a mismatch.
       */
      dataKeys: readonly string[];
      /** Not in CASE: guard the data values; see ResponseExportOptions.guardFormulas. @defaultValue false */
      guardFormulas?: boolean;
    };

/** The columns CASE fills from the report itself; data keys with these names get a `data_` prefix. */
const RESERVED_COLUMNS = ["id", "key", "participantID", "timestamp", "responseID"];
const DATA_KEY_PREFIX = "data_";

function dataColumn(key: string): string {
  return RESERVED_COLUMNS.includes(key) ? DATA_KEY_PREFIX + key : key;
}

function modifiedAtJson(modifiedAt: number | null | undefined): string {
  if (modifiedAt === null || modifiedAt === undefined) return goJsonString(GO_ZERO_TIME);
  // Stored in milliseconds by CASE's database, so at most millisecond precision.
  const ms = Math.round(modifiedAt * 1000);
  const sec = Math.floor(ms / 1000);
  return goJsonString(goRfc3339(sec, (ms - sec * 1000) * 1_000_000));
}

/** Go's `json.Marshal` of CASE's Report struct. */
export function reportJson(r: ExportReport): string {
  let out =
    '{"id":' +
    goJsonString(r.id) +
    ',"key":' +
    goJsonString(r.key) +
    ',"participantID":' +
    goJsonString(r.participantId) +
    ',"responseID":' +
    goJsonString(r.responseId ?? "") +
    ',"timestamp":' +
    goJsonNumber(int64Of(r.timestamp)) +
    ',"modifiedAt":' +
    modifiedAtJson(r.modifiedAt);
  const data = r.data ?? [];
  if (data.length > 0) {
    out += ',"data":[';
    for (let i = 0; i < data.length; i++) {
      const d = data[i]!;
      out += (i === 0 ? "" : ",") + '{"key":' + goJsonString(d.key) + ',"value":' + goJsonString(d.value);
      if (d.dtype !== undefined && d.dtype !== "") out += ',"dtype":' + goJsonString(d.dtype);
      out += "}";
    }
    out += "]";
  }
  return out + "}";
}

export function createReportFormatter(options: ReportExportOptions): ExportFormatter<ExportReport> {
  if (options.format === "json") return jsonArrayFormatter('{"reports": [', reportJson);

  const guard = options.guardFormulas === true;
  const dataColumns = sortedUnique(options.dataKeys.map(dataColumn));
  const columnIndex = new Map(dataColumns.map((c, i) => [c, i]));
  // The header, the ids and the report key are the study's; only the data values can carry a
  // participant's text (rules copy answers into them), so only they are guarded.
  const header = csvRecord([...RESERVED_COLUMNS, ...dataColumns]);
  const cells = new Array<string>(dataColumns.length);
  return csvFormatter(header, (r, mismatch) => {
    cells.fill("");
    let unknownKey = false;
    for (const d of r.data ?? []) {
      const i = columnIndex.get(dataColumn(d.key));
      if (i === undefined) {
        unknownKey = true;
        continue;
      }
      const seconds = d.dtype === "date" ? goDateSeconds(d.value) : null;
      cells[i] = seconds === null ? d.value : goRfc3339(seconds);
    }
    if (unknownKey) mismatch();
    let line =
      csvField(r.id) +
      "," +
      csvField(r.key) +
      "," +
      csvField(r.participantId) +
      "," +
      goRfc3339(int64Of(r.timestamp)) +
      "," +
      csvField(r.responseId ?? "");
    for (const c of cells) line += "," + csvField(c, guard);
    return line + "\n";
  });
}
