/**
 * Confidential responses as CASE's daily export job writes them: one entry per answered slot
 * (`<item>-<path.to.slot>`), in CSV or as an indented JSON array. The same entries answer the
 * management route that reads a participant's confidential responses.
 */
import { csvField, csvRecord } from "./go-csv";
import { goJsonString } from "./go-json";
import { readItemResponses, type ResponseItem } from "./response-items";
import { joinedText } from "./row-formatters";
import type { ExportFormatter, TextSink } from "./types";

/** A stored confidential response, its owner already resolved to the participant id. */
export interface ExportConfidentialResponse {
  id: string;
  participantId: string;
  /** survey-engine SurveyItemResponse[] as stored */
  responses: unknown[];
}

export interface ConfidentialResponseEntry {
  participantID: string;
  entryID: string;
  responseKey: string;
  value: string;
}

export interface ConfidentialExportOptions {
  format: "csv" | "json";
  /** Only these response keys (`<item>-<slot path>`); all when empty. */
  keyFilter?: readonly string[];
  /** Not in CASE: guard the response keys and values; see ResponseExportOptions.guardFormulas. @defaultValue false */
  guardFormulas?: boolean;
}

/**
 * The entries of one response (each is a record of the file: the formatter's `rows` counts them,
 * and so must `leadingSeparator` and `end(wroteRows)`). CASE collects them in a Go map and so writes them in random order;
 * here they come in the order of the response tree (a repeated path keeps its first place and its
 * last value, as the map would keep the last).
 */
export function confidentialResponseEntries(
  r: ExportConfidentialResponse,
  keyFilter: readonly string[] = [],
): ConfidentialResponseEntry[] {
  const slots = new Map<string, string>();
  for (const item of readItemResponses(r.responses)) {
    if (item.response !== null) collectSlots(item.response, item.key + "-", slots);
  }
  const out: ConfidentialResponseEntry[] = [];
  for (const [responseKey, value] of slots) {
    if (keyFilter.length > 0 && !keyFilter.includes(responseKey)) continue;
    out.push({ participantID: r.participantId, entryID: r.id, responseKey, value });
  }
  return out;
}

function collectSlots(node: ResponseItem, parentKey: string, into: Map<string, string>): void {
  const key = parentKey.endsWith("-") ? parentKey + node.key : parentKey + "." + node.key;
  if (node.items.length === 0) {
    into.set(key, node.value);
    return;
  }
  for (const child of node.items) collectSlots(child, key, into);
}

/** One entry as Go's json.Encoder writes it with a two-space indent, inside the array. */
function entryJson(e: ConfidentialResponseEntry): string {
  return (
    '\n  {\n    "participantID": ' +
    goJsonString(e.participantID) +
    ',\n    "entryID": ' +
    goJsonString(e.entryID) +
    ',\n    "responseKey": ' +
    goJsonString(e.responseKey) +
    ',\n    "value": ' +
    goJsonString(e.value) +
    "\n  }"
  );
}

export function createConfidentialResponseFormatter(
  options: ConfidentialExportOptions,
): ExportFormatter<ExportConfidentialResponse> {
  const filter = options.keyFilter ?? [];
  if (options.format === "json") {
    const write = (batch: readonly ExportConfidentialResponse[], leadingSeparator: boolean, sink: TextSink) => {
      let rows = 0;
      for (const r of batch) {
        for (const e of confidentialResponseEntries(r, filter)) {
          sink((rows > 0 || leadingSeparator ? "," : "") + entryJson(e));
          rows++;
        }
      }
      return { rows, mismatches: 0 };
    };
    return {
      contentType: "application/json",
      extension: ".json",
      start: () => "[",
      write,
      format: joinedText(write),
      // The encoder writes an empty array as `[]` and ends with a newline.
      end: (wroteRows = true) => (wroteRows ? "\n]\n" : "]\n"),
    };
  }
  const guard = options.guardFormulas === true;
  const write = (batch: readonly ExportConfidentialResponse[], _leadingSeparator: boolean, sink: TextSink) => {
    let rows = 0;
    for (const r of batch)
      for (const e of confidentialResponseEntries(r, filter)) {
        // the ids are the server's; the key paths and values come from the participant's response tree
        sink(
          csvField(e.participantID) +
            "," +
            csvField(e.entryID) +
            "," +
            csvField(e.responseKey, guard) +
            "," +
            csvField(e.value, guard) +
            "\n",
        );
        rows++;
      }
    return { rows, mismatches: 0 };
  };
  return {
    contentType: "text/csv",
    extension: ".csv",
    start: () => csvRecord(["participantID", "entryID", "responseKey", "value"]),
    write,
    format: joinedText(write),
    end: () => "",
  };
}
