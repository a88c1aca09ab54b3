import { describe, expect, it } from "vitest";
import { createResponseFormatter, type ResponseExportOptions } from "../src";
import { readCsv, rowsByHeader } from "./csv-reader";
import { intake, intakeAnswers, intakeResponseColumns, response } from "./surveys";

const options = (over: Partial<ResponseExportOptions> = {}): ResponseExportOptions => ({
  format: "wide",
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
  accountColumns: false,
  now: 1_800_000_000,
  ...over,
});

function exportWide(over: Partial<ResponseExportOptions> = {}) {
  const f = createResponseFormatter("intake", [intake], options(over));
  const batch = f.format([response({ responses: intakeAnswers })], false);
  const text = f.start() + batch.text + f.end();
  return { text, batch, records: readCsv(text) };
}

describe("every item kind in the wide format", () => {
  it("writes CASE's fixed and context columns, then every response column sorted by bytes", () => {
    const { records } = exportWide();
    expect(records[0]).toEqual([
      "ID",
      "participantID",
      "version",
      "opened",
      "submitted",
      "arrived",
      "language",
      "engineVersion",
      "session",
      ...intakeResponseColumns,
    ]);
    expect(records).toHaveLength(2);
  });

  it("fills each cell as CASE does", () => {
    const { records, batch } = exportWide();
    const row = rowsByHeader(records)[0]!;
    expect(batch).toMatchObject({ rows: 1, mismatches: 0 });
    expect(row).toEqual({
      ID: "resp-1",
      participantID: "p-1",
      version: "i1",
      opened: "1700000000",
      submitted: "1700000100",
      arrived: "1700000101",
      language: "en",
      engineVersion: "1.2.0",
      session: "s-9",
      // group items recurse
      "intake.G.Q1": "grouped",
      // single choice: the selected key; a cloze option's inputs under `<option>.<input>`
      "intake.Q1": "5",
      "intake.Q1-2": "",
      "intake.Q1-3": "",
      "intake.Q1-4": "",
      "intake.Q1-5.dd": "y",
      "intake.Q1-5.num": "33",
      "intake.Q1-5.txt": "Ann",
      "intake.Q10": "3",
      "intake.Q11-cat1": "1",
      "intake.Q11-cat2": "3",
      "intake.Q12-row1": "o2",
      "intake.Q12-row2": "",
      "intake.Q13-r1": "2",
      "intake.Q14-a-c1": "x",
      "intake.Q14-a-c2": "",
      "intake.Q14-b-c1": "",
      "intake.Q14-b-c2": "y",
      "intake.Q15": "TRUE",
      "intake.Q16-age": "30",
      "intake.Q16-name": "Ann",
      "intake.Q16-unit": "w",
      "intake.Q17": "3600",
      "intake.Q18": "K7-93",
      "intake.Q19": "80",
      // multiple choice: TRUE/FALSE per option, open text in `…-open`, embedded cloze input ""
      "intake.Q2-1": "TRUE",
      "intake.Q2-2": "TRUE",
      "intake.Q2-2-open": "my own words",
      "intake.Q2-3": "TRUE",
      "intake.Q2-3.txt": "inner text",
      "intake.Q2-4": "FALSE",
      "intake.Q2-4-open": "",
      "intake.Q20-contact.city": "Utrecht",
      "intake.Q20-contact.country": "",
      "intake.Q20-contact.mail": "",
      "intake.Q20-contact.name": "Ann Example",
      "intake.Q20-contact.postalCode": "",
      "intake.Q20-contact.street": "",
      "intake.Q20-contact.street2": "",
      // mixed slot types: the raw response tree as Go's json.Marshal writes it
      "intake.Q21-inp": '{"key":"inp","value":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"}',
      "intake.Q21-scg": '{"key":"scg","items":[{"key":"1"}]}',
      "intake.Q22-w": '{"key":"w","value":"widget value"}',
      "intake.Q3": " free text, with comma",
      "intake.Q4": "42",
      "intake.Q5": "1699920000",
      // line breaks in response cells become <br />
      "intake.Q6": 'first line<br />second "quoted"<br />third',
      "intake.Q7": "b",
      "intake.Q8": "7",
      "intake.Q9-mat.r1.chk": "true",
      "intake.Q9-mat.r1.dd": "2",
      "intake.Q9-mat.r1.in": "cell text",
      "intake.Q9-mat.r1.num": "5",
      "intake.Q9-mat.r2": "o2",
    });
  });

  it("quotes as Go's csv writer: a comma, a quote, a leading space", () => {
    const { text } = exportWide();
    expect(text).toContain(",intake.Q21-inp,");
    expect(text).not.toContain('"intake.Q1"');
    expect(text).toContain(',"{""key"":""inp"",""value"":""\\u003cb\\u003e\\u0026\\u003c/b\\u003e""}",');
    expect(text).toContain(',"first line<br />second ""quoted""<br />third",');
    expect(text).toContain(`," free text, with comma",`);
  });

  it("leaves display items, page breaks, survey ends and confidential items without a column", () => {
    const { records } = exportWide();
    const header = records[0]!;
    for (const gone of ["intake.info", "intake.end", "intake.conf", "intake.G"]) {
      expect(header.some((c) => c === gone || c.startsWith(gone + "-"))).toBe(false);
    }
  });

  it("leaves an unanswered survey's cells empty except CASE's FALSE for consent", () => {
    const f = createResponseFormatter("intake", [intake], options());
    const text = f.start() + f.format([response({ responses: [] })], false).text;
    const row = rowsByHeader(readCsv(text))[0]!;
    for (const col of intakeResponseColumns) expect(row[col], col).toBe(col === "intake.Q15" ? "FALSE" : "");
  });
});
