import { describe, expect, it } from "vitest";
import { createResponseFormatter, type ExportResponse, type ResponseExportOptions } from "../src";
import { readCsv, rowsByHeader } from "./csv-reader";
import { answer, comp, option, question, r, upload, v } from "./survey-builders";
import { intake, intakeAnswers, response, weeklyV1, weeklyV2 } from "./surveys";

const noMeta = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };
const options = (over: Partial<ResponseExportOptions> = {}): ResponseExportOptions => ({
  format: "wide",
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: noMeta,
  accountColumns: false,
  now: 1_800_000_000,
  ...over,
});

const weekly = (over: Partial<ExportResponse> & Pick<ExportResponse, "responses">): ExportResponse =>
  response({ key: "weekly", versionId: "w1", arrivedAt: 1_700_000_500, ...over });

/** Answered with version 1: symptoms 1 and "other" (3), a pharmacist, a start date. */
const onV1 = weekly({
  id: "a",
  responses: [
    answer("weekly.Q1", [r("mcg", [r("1"), v("3", "sore eyes")])], {
      position: 0,
      rendered: [10, 20],
      responded: [30],
    }),
    answer("weekly.Q2", [r("scg", [v("other", "pharmacist")])], { position: 1 }),
    answer("weekly.Q3", [v("date", "1699000000", "date")], { position: 2 }),
  ],
});
/** Answered with version 2: headache (4), yes, a temperature, two lines of notes. */
const onV2 = weekly({
  id: "b",
  versionId: "w2",
  arrivedAt: 1_710_000_500,
  responses: [
    answer("weekly.Q1", [r("mcg", [r("4")])]),
    answer("weekly.Q2", [r("scg", [r("yes")])]),
    answer("weekly.Q4", [v("num", "38.5", "number")]),
    answer("weekly.G1.Q1", [v("txt", "tired\nbut ok")]),
  ],
});

const WEEKLY_COLUMNS = [
  "weekly.G1.Q1",
  "weekly.Q1-0",
  "weekly.Q1-1",
  "weekly.Q1-2",
  "weekly.Q1-3",
  "weekly.Q1-3-open",
  "weekly.Q1-4",
  "weekly.Q2",
  "weekly.Q2-other",
  "weekly.Q3",
  "weekly.Q4",
];

function file(rows: ExportResponse[], over: Partial<ResponseExportOptions> = {}, versions = [weeklyV1, weeklyV2]) {
  const f = createResponseFormatter("weekly", versions, options(over));
  const batch = f.format(rows, false);
  return { text: f.start() + batch.text + f.end(), batch, formatter: f };
}

describe("versions", () => {
  it("merges the columns of every version into one sorted header; a row fills its own version's", () => {
    const { text, batch } = file([onV1, onV2]);
    const records = readCsv(text);
    expect(records[0]!.slice(9)).toEqual(WEEKLY_COLUMNS);
    const [a, b] = rowsByHeader(records);
    expect(batch).toEqual({ text: expect.any(String), rows: 2, mismatches: 0 });
    expect(a).toMatchObject({
      version: "w1",
      "weekly.G1.Q1": "",
      "weekly.Q1-0": "FALSE",
      "weekly.Q1-1": "TRUE",
      "weekly.Q1-2": "FALSE",
      "weekly.Q1-3": "TRUE",
      "weekly.Q1-3-open": "sore eyes",
      "weekly.Q1-4": "",
      "weekly.Q2": "other",
      "weekly.Q2-other": "pharmacist",
      "weekly.Q3": "1699000000",
      "weekly.Q4": "",
    });
    expect(b).toMatchObject({
      version: "w2",
      "weekly.G1.Q1": "tired<br />but ok",
      "weekly.Q1-0": "FALSE",
      "weekly.Q1-3": "",
      "weekly.Q1-3-open": "",
      "weekly.Q1-4": "TRUE",
      "weekly.Q2": "yes",
      "weekly.Q2-other": "",
      "weekly.Q3": "",
      "weekly.Q4": "38.5",
    });
  });

  it("reads an unknown version id with the version live at arrival and names both", () => {
    const row = rowsByHeader(readCsv(file([{ ...onV1, versionId: "w9", arrivedAt: 1_705_000_000 }]).text))[0]!;
    expect(row["version"]).toBe("w9 (w1)");
    expect(row["weekly.Q1-3-open"]).toBe("sore eyes");
  });

  it("names only the found version when the response has none", () => {
    const row = rowsByHeader(readCsv(file([{ ...onV2, versionId: "", arrivedAt: 1_710_000_100 }]).text))[0]!;
    expect(row["version"]).toBe("w2");
    expect(row["weekly.Q1-4"]).toBe("TRUE");
  });

  it("takes the next published version for a response older than every version", () => {
    const row = rowsByHeader(readCsv(file([{ ...onV1, versionId: "", arrivedAt: 1_600_000_000 }]).text))[0]!;
    expect(row["version"]).toBe("w1");
  });

  it("takes the next version when the one live before arrival had been unpublished", () => {
    const retired = { ...weeklyV1, unpublishedAt: 1_701_000_000 };
    const row = rowsByHeader(
      readCsv(file([{ ...onV1, versionId: "", arrivedAt: 1_705_000_000 }], {}, [retired, weeklyV2]).text),
    )[0]!;
    expect(row["version"]).toBe("w2");
  });

  it("writes a response no version fits with its fixed cells, empty answers, and counts it", () => {
    const { text, batch } = file([onV1], {}, []);
    const records = readCsv(text);
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
    ]);
    expect(records[1]).toEqual(["a", "p-1", "w1", "1700000000", "1700000100", "1700000500", "en", "1.2.0", "s-9"]);
    expect(batch.mismatches).toBe(1);
  });

  it("counts a slot the version does not know, and still writes the row", () => {
    // Option 3 was removed in version 2; its column exists from version 1.
    const odd = { ...onV2, responses: [answer("weekly.Q1", [r("mcg", [r("3")])])] };
    const { text, batch } = file([odd, onV2]);
    expect(batch.mismatches).toBe(1);
    const [row] = rowsByHeader(readCsv(text));
    expect(row!["weekly.Q1-3"]).toBe("TRUE");
    expect(row!["weekly.Q1-0"]).toBe("FALSE");
  });

  it("counts an answered item the version does not have, and ignores unanswered display items", () => {
    const extra = { ...onV2, responses: [...onV2.responses, answer("weekly.Q99", [v("x", "1")])] };
    const display = { ...onV2, responses: [...onV2.responses, answer("weekly.intro", null)] };
    expect(file([extra]).batch.mismatches).toBe(1);
    expect(file([display]).batch.mismatches).toBe(0);
  });
});

describe("options", () => {
  it("shortKeys drops the survey key from columns and still finds the answers", () => {
    const records = readCsv(file([onV1], { shortKeys: true }).text);
    expect(records[0]!.slice(9)).toEqual(WEEKLY_COLUMNS.map((c) => c.slice("weekly.".length)));
    expect(rowsByHeader(records)[0]).toMatchObject({ "Q1-3-open": "sore eyes", Q2: "other", Q3: "1699000000" });
  });

  it("questionOptionSep joins question and option keys", () => {
    const records = readCsv(file([onV1], { questionOptionSep: "$" }).text);
    expect(records[0]).toContain("weekly.Q1$3$open");
    expect(rowsByHeader(records)[0]).toMatchObject({ "weekly.Q1$3": "TRUE", "weekly.Q2$other": "pharmacist" });
  });

  it("extraContextColumns come after CASE's three, empty when the response lacks them", () => {
    const row = { ...onV1, context: { language: "de", engineVersion: "1", session: "x", panel: "B, north" } };
    const records = readCsv(file([row], { extraContextColumns: ["panel", "cohort"] }).text);
    expect(records[0]!.slice(6, 11)).toEqual(["language", "engineVersion", "session", "panel", "cohort"]);
    expect(records[1]!.slice(6, 11)).toEqual(["de", "1", "x", "B, north", ""]);
  });

  it("does not read context keys from the object prototype", () => {
    const records = readCsv(file([onV1], { extraContextColumns: ["constructor", "toString"] }).text);
    expect(records[1]!.slice(9, 11)).toEqual(["", ""]);
  });

  it("guardFormulas prefixes cells that spreadsheets would run; off by default", () => {
    const evil = { ...onV1, responses: [answer("weekly.Q2", [r("scg", [v("other", "=HYPERLINK(1)")])])] };
    expect(rowsByHeader(readCsv(file([evil]).text))[0]!["weekly.Q2-other"]).toBe("=HYPERLINK(1)");
    expect(rowsByHeader(readCsv(file([evil], { guardFormulas: true }).text))[0]!["weekly.Q2-other"]).toBe(
      "'=HYPERLINK(1)",
    );
  });
});

describe("meta columns", () => {
  const all = { position: true, initTimes: true, displayedTimes: true, responsedTimes: true };

  it("each flag adds its column per question, sorted after the responses", () => {
    for (const [flag, suffix] of [
      ["position", "metaPosition"],
      ["initTimes", "metaInit"],
      ["displayedTimes", "metaDisplayed"],
      ["responsedTimes", "metaResponse"],
    ] as const) {
      const header = readCsv(file([onV1], { includeMeta: { ...noMeta, [flag]: true } }).text)[0]!;
      expect(header.slice(9 + WEEKLY_COLUMNS.length)).toEqual(
        ["weekly.G1.Q1", "weekly.Q1", "weekly.Q2", "weekly.Q3", "weekly.Q4"].map((q) => q + "-" + suffix),
      );
    }
    expect(readCsv(file([onV1]).text)[0]).toHaveLength(9 + WEEKLY_COLUMNS.length);
  });

  it("writes timestamps joined by commas, positions, and empty cells for other versions' questions", () => {
    const row = rowsByHeader(readCsv(file([onV1], { includeMeta: all }).text))[0]!;
    expect(row).toMatchObject({
      "weekly.Q1-metaInit": "10,20",
      "weekly.Q1-metaDisplayed": "1700000001",
      "weekly.Q1-metaResponse": "30",
      "weekly.Q1-metaPosition": "0",
      "weekly.Q2-metaPosition": "1",
      "weekly.Q2-metaResponse": "",
      "weekly.Q3-metaPosition": "2",
      // not in version 1
      "weekly.Q4-metaInit": "",
      "weekly.Q4-metaPosition": "",
      "weekly.G1.Q1-metaPosition": "",
    });
  });

  it("an unanswered question of the version has empty times and position 0", () => {
    const row = rowsByHeader(readCsv(file([{ ...onV1, responses: [] }], { includeMeta: all }).text))[0]!;
    expect(row).toMatchObject({ "weekly.Q1-metaInit": "", "weekly.Q1-metaPosition": "0" });
  });

  it('in JSON: arrays, numbers, and "" where the question is not in the version', () => {
    const json = JSON.parse(file([onV1], { includeMeta: all, format: "json" }).text) as {
      responses: Record<string, unknown>[];
    };
    expect(json.responses[0]).toMatchObject({
      "weekly.Q1-metaInit": [10, 20],
      "weekly.Q2-metaResponse": [],
      "weekly.Q2-metaPosition": 1,
      "weekly.Q4-metaInit": "",
    });
  });
});

describe("account columns", () => {
  const tracked = (account: ExportResponse["account"]) => ({ ...onV1, account });

  it("add accountID and mainProfile right after the fixed columns, once, with the participant's values", () => {
    const { text } = file(
      [tracked({ accountId: "h-1", mainProfile: true }), tracked({ accountId: "h-2", mainProfile: false })],
      {
        accountColumns: true,
        extraContextColumns: ["accountID", "mainProfile"],
      },
    );
    const records = readCsv(text);
    expect(records[0]!.slice(0, 10)).toEqual([
      "ID",
      "participantID",
      "version",
      "opened",
      "submitted",
      "arrived",
      "accountID",
      "mainProfile",
      "language",
      "engineVersion",
    ]);
    expect(records[0]!.filter((c) => c === "accountID")).toHaveLength(1);
    expect(records[1]!.slice(6, 8)).toEqual(["h-1", "true"]);
    expect(records[2]!.slice(6, 8)).toEqual(["h-2", "false"]);
  });

  it("are empty when the participant's account is unknown", () => {
    for (const account of [null, undefined, { accountId: null, mainProfile: null }]) {
      expect(readCsv(file([tracked(account)], { accountColumns: true }).text)[1]!.slice(6, 8)).toEqual(["", ""]);
    }
    const json = JSON.parse(file([tracked(null)], { accountColumns: true, format: "json" }).text) as {
      responses: Record<string, unknown>[];
    };
    expect(json.responses[0]).toMatchObject({ accountID: "", mainProfile: "" });
  });

  it("are a JSON string and boolean", () => {
    const json = JSON.parse(
      file([tracked({ accountId: "h-1", mainProfile: true })], { accountColumns: true, format: "json" }).text,
    ) as { responses: Record<string, unknown>[] };
    expect(json.responses[0]).toMatchObject({ accountID: "h-1", mainProfile: true });
  });

  it("never appear when tracking is off, not even from the context", () => {
    const row = {
      ...tracked({ accountId: "h-1", mainProfile: true }),
      context: { accountID: "ctx", mainProfile: "x" },
    };
    for (const format of ["wide", "long"] as const) {
      const text = file([row], { format, extraContextColumns: ["accountID", "mainProfile"] }).text;
      expect(readCsv(text)[0]).not.toContain("accountID");
      expect(readCsv(text)[0]).not.toContain("mainProfile");
    }
    const json = JSON.parse(file([row], { format: "json", extraContextColumns: ["accountID"] }).text) as {
      responses: Record<string, unknown>[];
    };
    expect(json.responses[0]).not.toHaveProperty("accountID");
    expect(json.responses[0]).not.toHaveProperty("mainProfile");
  });
});

describe("long format", () => {
  it("writes one line per response column, then per meta column, after the fixed and context cells", () => {
    const { text } = file([onV1], { format: "long", includeMeta: { ...noMeta, position: true } });
    const records = readCsv(text);
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
      "responseSlot",
      "value",
    ]);
    const lead = ["a", "p-1", "w1", "1700000000", "1700000100", "1700000500", "en", "1.2.0", "s-9"];
    expect(records.slice(1, 3)).toEqual([
      [...lead, "weekly.G1.Q1", ""],
      [...lead, "weekly.Q1-0", "FALSE"],
    ]);
    expect(records).toHaveLength(1 + WEEKLY_COLUMNS.length + 5);
    expect(records.at(-1)).toEqual([...lead, "weekly.Q4-metaPosition", ""]);
    expect(records.find((rec) => rec[9] === "weekly.Q3")).toEqual([...lead, "weekly.Q3", "1699000000"]);
  });

  it("replaces line breaks in answers", () => {
    const records = readCsv(file([onV2], { format: "long" }).text);
    expect(records.find((rec) => rec[9] === "weekly.G1.Q1")![10]).toBe("tired<br />but ok");
  });
});

describe("json format", () => {
  it("is CASE's document: sorted keys, Go's escaping, numbers, separators", () => {
    const row = { ...onV2, context: { language: "en", engineVersion: "1", session: "<s>" } };
    const { text, formatter } = file([row], { format: "json", shortKeys: true });
    expect(formatter.contentType).toBe("application/json");
    expect(formatter.extension).toBe(".json");
    expect(text).toBe(
      '{ "responses": [{"G1.Q1":"tired\\nbut ok","ID":"b","Q1-0":"FALSE","Q1-1":"FALSE","Q1-2":"FALSE",' +
        '"Q1-3":"","Q1-3-open":"","Q1-4":"TRUE","Q2":"yes","Q2-other":"","Q3":"","Q4":"38.5",' +
        '"arrived":1710000500,"engineVersion":"1","language":"en","opened":1700000000,"participantID":"p-1",' +
        '"session":"\\u003cs\\u003e","submitted":1700000100,"version":"w2"}]}',
    );
  });

  it("a slot of mixed type is the response tree as a nested object, not a string", () => {
    const f = createResponseFormatter("intake", [intake], options({ format: "json" }));
    const text = f.start() + f.format([response({ responses: intakeAnswers })], false).text + f.end();
    expect(text).toContain('"intake.Q21-inp":{"key":"inp","value":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"}');
    expect(JSON.parse(text)).toMatchObject({
      responses: [{ "intake.Q21-scg": { key: "scg", items: [{ key: "1" }] } }],
    });
  });
});

describe("items answered twice, and questions sharing a key", () => {
  // Two questions named dup.Q1 (a single choice, then a text input: both write the column dup.Q1).
  const dup = {
    versionId: "d1",
    publishedAt: 1_690_000_000,
    unpublishedAt: null,
    definition: upload("dup", [
      question("dup.Q1", { en: "a" }, [
        comp("singleChoiceGroup", "scg", undefined, [option("a", "A"), option("b", "B")]),
      ]),
      question("dup.Q1", { en: "b" }, [comp("input", "inp", { en: "x" })]),
      question("dup.Q2", { en: "c" }, [
        comp("multipleChoiceGroup", "mcg", undefined, [option("1", "1"), option("2", "2")]),
      ]),
    ]),
  };
  const row = (responses: unknown[]) => {
    const f = createResponseFormatter("dup", [dup], options({ includeMeta: { ...noMeta, position: true } }));
    const batch = f.format([response({ key: "dup", versionId: "d1", responses })], false);
    return { row: rowsByHeader(readCsv(f.start() + batch.text))[0]!, mismatches: batch.mismatches };
  };

  it("reads the first answer to an item; both questions of a key read it, the earlier one's cell first", () => {
    expect(
      row([
        answer("dup.Q2", [r("mcg", [r("2")])], { position: 1 }),
        answer("dup.Q2", [r("mcg", [r("1")])], { position: 2 }),
        answer("dup.Q1", [r("scg", [r("b")])], { position: 3 }),
      ]),
    ).toEqual({
      row: expect.objectContaining({
        "dup.Q1": "b",
        "dup.Q2-1": "FALSE",
        "dup.Q2-2": "TRUE",
        "dup.Q1-metaPosition": "3",
        "dup.Q2-metaPosition": "1",
      }) as unknown,
      mismatches: 0,
    });
  });

  it("checks an answer's keys against the first question of its key", () => {
    // the text input's answer fills dup.Q1 through the second question, but is no single choice answer
    expect(
      row([answer("dup.Q1", [v("inp", "typed")], { position: 4 }), answer("dup.Q1", [r("scg", [r("a")])])]),
    ).toEqual({
      row: expect.objectContaining({ "dup.Q1": "typed", "dup.Q2-1": "", "dup.Q1-metaPosition": "4" }) as unknown,
      mismatches: 1,
    });
  });
});

describe("batches", () => {
  const rows = [onV1, onV2, { ...onV1, id: "c", versionId: "w9" }];

  for (const format of ["wide", "long", "json"] as const) {
    it(`${format}: start + batch + batch + end equals one batch`, () => {
      const f = createResponseFormatter("weekly", [weeklyV1, weeklyV2], options({ format, accountColumns: true }));
      const whole = f.start() + f.format(rows, false).text + f.end();
      // A resumed export continues with a fresh formatter.
      const g = createResponseFormatter("weekly", [weeklyV1, weeklyV2], options({ format, accountColumns: true }));
      const first = f.format(rows.slice(0, 1), false);
      const rest = g.format(rows.slice(1), true);
      expect(f.start() + first.text + rest.text + g.end()).toBe(whole);
      expect(first.rows + rest.rows).toBe(3);
      if (format === "json") expect(() => JSON.parse(whole) as unknown).not.toThrow();
      else expect(readCsv(whole)).toHaveLength(format === "wide" ? 4 : 1 + 3 * WEEKLY_COLUMNS.length);
    });
  }

  it("an empty export is a header alone, or an empty JSON list", () => {
    const csv = createResponseFormatter("weekly", [weeklyV1], options());
    expect(csv.start() + csv.format([], false).text + csv.end()).toBe(csv.start());
    const json = createResponseFormatter("weekly", [weeklyV1], options({ format: "json" }));
    expect(json.start() + json.format([], false).text + json.end()).toBe('{ "responses": []}');
  });
});
