import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createResponseFormatter,
  type ByteSink,
  type ExportResponse,
  type ResponseExportOptions,
  type SurveyVersionInput,
} from "../src";
import { jsonText, keysIn, mutatedSubmission, randomSource } from "./generated-json";
import { answer, r, v } from "./survey-builders";
import { intake, intakeAnswers, response, weeklyV1, weeklyV2 } from "./surveys";

/** Answers to both weekly versions, every question of each. */
const weeklyAnswers: unknown[] = [
  answer("weekly.intro", null),
  answer("weekly.Q1", [r("mcg", [r("1"), v("3", "sore eyes"), r("4")])], { position: 0, rendered: [10, 20] }),
  answer("weekly.Q2", [r("scg", [v("other", "pharmacist")])], { position: 1, responded: [30] }),
  answer("weekly.Q3", [v("date", "1699000000", "date")], { position: 2 }),
  answer("weekly.Q4", [v("num", "38.5", "number")]),
  answer("weekly.G1.Q1", [v("txt", "tired\nbut ok")]),
];

const SURVEYS: { key: string; versions: SurveyVersionInput[]; answers: unknown[]; versionIds: string[] }[] = [
  { key: "intake", versions: [intake], answers: intakeAnswers, versionIds: ["i1", "", "i9"] },
  { key: "weekly", versions: [weeklyV1, weeklyV2], answers: weeklyAnswers, versionIds: ["w1", "w2", "", "w9"] },
];

const optionsArbitrary = fc.record({
  format: fc.constantFrom<ResponseExportOptions["format"]>("wide", "long", "json"),
  questionOptionSep: fc.constantFrom("-", ".", "__"),
  shortKeys: fc.boolean(),
  extraContextColumns: fc.constantFrom<string[]>([], ["platform", "language"]),
  includeMeta: fc.record({
    position: fc.boolean(),
    initTimes: fc.boolean(),
    displayedTimes: fc.boolean(),
    responsedTimes: fc.boolean(),
  }),
  accountColumns: fc.boolean(),
  guardFormulas: fc.boolean(),
  now: fc.constant(1_800_000_000),
});

describe("a response given as its JSON text", () => {
  for (const survey of SURVEYS) {
    it(`is written byte for byte as the parsed response, for every item kind (${survey.key}), format and option`, () => {
      const keys = [...keysIn(survey.answers), "zz", "0"];
      fc.assert(
        fc.property(fc.integer(), optionsArbitrary, fc.boolean(), (seed, options, plain) => {
          const rnd = randomSource(seed);
          const parsedRows: ExportResponse[] = [];
          const textRows: ExportResponse[] = [];
          const count = 1 + Math.floor(rnd() * 5);
          for (let i = 0; i < count; i++) {
            const text = jsonText(mutatedSubmission(survey.answers, rnd, keys), rnd, plain);
            const row = response({
              id: `r${i}`,
              key: survey.key,
              versionId: survey.versionIds[Math.floor(rnd() * survey.versionIds.length)]!,
              arrivedAt: 1_695_000_000 + Math.floor(rnd() * 20_000_000),
              responses: [],
              context: { language: "en", platform: "=cmd", session: "s" },
              account: { accountId: "acc", mainProfile: rnd() < 0.5 },
            });
            parsedRows.push({ ...row, responses: JSON.parse(text) as unknown[] });
            textRows.push({ ...row, responses: text });
          }
          const parsed = createResponseFormatter(survey.key, survey.versions, options);
          const fromText = createResponseFormatter(survey.key, survey.versions, options);
          const following = rnd() < 0.5;
          const expected = parsed.format(parsedRows, following);
          const actual = fromText.format(textRows, following);
          expect(actual.text).toBe(expected.text);
          expect(actual.mismatches).toBe(expected.mismatches);
          expect(actual.rows).toBe(expected.rows);
        }),
        { numRuns: 150 },
      );
    });
  }

  it("reads a JSON null as no responses, as the parsed document read through the driver", () => {
    const formatter = createResponseFormatter("intake", [intake], {
      format: "wide",
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: { position: true, initTimes: false, displayedTimes: false, responsedTimes: false },
      accountColumns: false,
      now: 1_800_000_000,
    });
    const empty = formatter.format([response({ responses: [] })], false);
    expect(formatter.format([response({ responses: "null" })], false)).toEqual(empty);
    expect(formatter.format([response({ responses: " [ ] " })], false)).toEqual(empty);
    // a document that is no array fails the export as the parsed one does
    expect(() => formatter.format([response({ responses: '{"key": "intake.Q1"}' })], false)).toThrow(TypeError);
    expect(() =>
      formatter.format([response({ responses: { key: "intake.Q1" } as unknown as unknown[] })], false),
    ).toThrow(TypeError);
  });
});

/** The plainest ByteSink: every byte pushed onto an array, `again` copied one by one. */
class ArraySink implements ByteSink {
  readonly out: number[] = [];
  private readonly encoder = new TextEncoder();
  get length(): number {
    return this.out.length;
  }
  text(piece: string): void {
    for (const byte of this.encoder.encode(piece)) this.out.push(byte);
  }
  bytes(bytes: Uint8Array): void {
    for (const byte of bytes) this.out.push(byte);
  }
  byte(value: number): void {
    this.out.push(value);
  }
  again(from: number, to: number): void {
    for (let i = from; i < to; i++) this.out.push(this.out[i]!);
  }
}

describe("a batch written as bytes (writeBytes)", () => {
  it("the long CSV has it, the other formats write text only", () => {
    const base = { questionOptionSep: "-", shortKeys: false, extraContextColumns: [], accountColumns: false };
    const meta = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };
    const formatterOf = (format: ResponseExportOptions["format"]) =>
      createResponseFormatter("intake", [intake], { ...base, format, includeMeta: meta, now: 1 });
    expect(formatterOf("long").writeBytes).toBeTypeOf("function");
    expect(formatterOf("wide").writeBytes).toBeUndefined();
    expect(formatterOf("json").writeBytes).toBeUndefined();
  });

  for (const survey of SURVEYS) {
    it(`gives the UTF-8 of the batch's text, counts included, for every option (${survey.key}, long)`, () => {
      const keys = [...keysIn(survey.answers), "zz", "0"];
      fc.assert(
        fc.property(fc.integer(), optionsArbitrary, fc.boolean(), (seed, options, plain) => {
          const rnd = randomSource(seed);
          const rows: ExportResponse[] = [];
          const count = Math.floor(rnd() * 5);
          for (let i = 0; i < count; i++) {
            const text = jsonText(mutatedSubmission(survey.answers, rnd, keys), rnd, plain);
            rows.push(
              response({
                id: `r${i} "é"`,
                key: survey.key,
                versionId: survey.versionIds[Math.floor(rnd() * survey.versionIds.length)]!,
                arrivedAt: 1_695_000_000 + Math.floor(rnd() * 20_000_000),
                // parsed documents and their text alike
                responses: rnd() < 0.5 ? text : (JSON.parse(text) as unknown[]),
                context: { language: "en", platform: '=cmd, "ü"', session: "s\n1" },
                account: { accountId: "acc", mainProfile: rnd() < 0.5 },
              }),
            );
          }
          const formatter = createResponseFormatter(survey.key, survey.versions, { ...options, format: "long" });
          const following = rnd() < 0.5;
          const { text, ...counts } = formatter.format(rows, following);
          const sink = new ArraySink();
          // after bytes written before, as a batch follows earlier ones in the exporter's buffer
          sink.text("earlier, 東京\n");
          const before = sink.length;
          expect(formatter.writeBytes!(rows, following, sink)).toEqual(counts);
          // as UTF-8 (a lone surrogate in an answer is written as U+FFFD either way)
          expect(Buffer.from(sink.out.slice(before)).toString("utf8")).toBe(Buffer.from(text, "utf8").toString("utf8"));
        }),
        { numRuns: 150 },
      );
    });
  }
});
