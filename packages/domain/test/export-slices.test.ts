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
import { FORMAT_SLICE, Utf8Text, sliceFormatter } from "../src/exports/export-kind";

function sliced<Row>(formatter: ExportFormatter<Row>, rows: readonly Row[], leading: boolean, slice?: number) {
  const batch = sliceFormatter(formatter, leading, new Utf8Text(), slice);
  for (const row of rows) batch.push(row);
  const { bytes, ...counts } = batch.finish();
  return { text: bytes.toString("utf8"), ...counts };
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

describe("a batch's text encoded piece by piece", () => {
  it("gives the UTF-8 of the joined text, through many doublings and multi-byte pieces", () => {
    const pieces = Array.from({ length: 3000 }, (_, i) =>
      i % 7 === 0 ? `Zürich, 東京 ${i} 🙂\n` : i % 11 === 0 ? "" : `row ${i},${"x".repeat(i % 50)}\n`,
    );
    for (const capacity of [undefined, 1, 1024, 10_000_000]) {
      const text = new Utf8Text(capacity);
      for (const piece of pieces) text.write(piece);
      expect(text.written.equals(Buffer.from(pieces.join(""), "utf8"))).toBe(true);
    }
  });

  it("a piece of nothing but four-byte characters fits however full the buffer is", () => {
    const text = new Utf8Text(1024);
    text.write("a".repeat(1023));
    const emoji = "🙂".repeat(700);
    text.write(emoji);
    expect(text.written.toString("utf8")).toBe("a".repeat(1023) + emoji);
  });

  it("as a ByteSink: text (short ASCII, short with other characters, long), bytes, a byte and bytes again", () => {
    const expected: Buffer[] = [];
    for (const capacity of [undefined, 1, 1024]) {
      const text = new Utf8Text(capacity);
      expected.length = 0;
      const add = (bytes: Buffer) => expected.push(bytes);
      for (let i = 0; i < 2000; i++) {
        const start = text.length;
        const pieces = [`${i},`, i % 5 === 0 ? "ab€c" : "abc", i % 9 === 0 ? "x".repeat(40) + "é" : "", "ü"];
        for (const piece of pieces) {
          text.text(piece);
          add(Buffer.from(piece, "utf8"));
        }
        text.bytes(new TextEncoder().encode(",name,"));
        add(Buffer.from(",name,"));
        text.byte(0x0a);
        add(Buffer.from("\n"));
        const end = text.length;
        text.again(start, end);
        add(Buffer.concat(expected).subarray(start, end));
      }
      expect(text.written.equals(Buffer.concat(expected))).toBe(true);
      expect(text.length).toBe(Buffer.concat(expected).length);
    }
  });
});
