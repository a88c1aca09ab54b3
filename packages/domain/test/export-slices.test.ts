/**
 * A batch formatted slice by slice as its rows arrive (sliceFormatter) must give the bytes the
 * formatter gives for the whole batch at once: separators, record counts and mismatches included,
 * also when some rows write no record at all (the confidential export's rows without a kept key).
 */
import { describe, expect, it } from "vitest";
import {
  createConfidentialResponseFormatter,
  createParticipantFormatter,
  type ExportConfidentialResponse,
  type ExportFormatter,
  type ExportParticipant,
} from "@studyflow/case-export";
import { FORMAT_SLICE, sliceFormatter } from "../src/exports/export-kind";

function sliced<Row>(formatter: ExportFormatter<Row>, rows: readonly Row[], leading: boolean, slice?: number) {
  const batch = sliceFormatter(formatter, leading, slice);
  for (const row of rows) batch.push(row);
  return batch.finish();
}

const response = (i: number, keys: readonly string[]): ExportConfidentialResponse => ({
  id: `r${i}`,
  participantId: `p${i % 5}`,
  responses: keys.map((key) => ({ key, response: { key: "rg", items: [{ key: "a", value: `v${i}` }] } })),
});

// every third response answers only a key the filter drops: it writes no record
const responses = Array.from({ length: 150 }, (_, i) => response(i, i % 3 === 0 ? ["dropped"] : ["kept", "other"]));
const participants: ExportParticipant[] = Array.from({ length: 150 }, (_, i) => ({
  id: `id${i}`,
  participantId: `p${i}`,
  studyStatus: "active",
  enteredAt: 1_700_000_000 + i,
  modifiedAt: 1_700_000_100 + i,
  flags: { group: String(i % 4) },
  linkingCodes: {},
  assignedSurveys: [],
  lastSubmissions: {},
  messages: [],
}));

describe("a batch formatted as its rows arrive", () => {
  const formatters = {
    "confidential json": createConfidentialResponseFormatter({ format: "json", keyFilter: ["kept-rg.a"] }),
    "confidential csv": createConfidentialResponseFormatter({ format: "csv", keyFilter: ["kept-rg.a"] }),
  };

  for (const [name, formatter] of Object.entries(formatters)) {
    for (const leading of [false, true]) {
      it(`${name}${leading ? ", following earlier rows," : ""} gives the text of the batch at once`, () => {
        const atOnce = formatter.format(responses, leading);
        expect(atOnce.rows).toBe(100);
        for (const slice of [1, 2, 3, 7, FORMAT_SLICE, 1000]) {
          expect(sliced(formatter, responses, leading, slice)).toEqual(atOnce);
        }
        // a batch whose first slice writes nothing: the next slice's first record has no separator
        const quietFirst = [...responses.filter((_, i) => i % 3 === 0).slice(0, 4), ...responses.slice(1, 6)];
        expect(sliced(formatter, quietFirst, leading, 4)).toEqual(formatter.format(quietFirst, leading));
      });
    }
  }

  it("a JSON array of participants, in slices of the default size, as at once", () => {
    const formatter = createParticipantFormatter({ studyKey: "s" });
    for (const leading of [false, true]) {
      expect(sliced(formatter, participants, leading)).toEqual(formatter.format(participants, leading));
    }
    expect(sliced(formatter, [], false)).toEqual({ text: "", rows: 0, mismatches: 0 });
  });
});
