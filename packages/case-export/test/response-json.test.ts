import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readItemResponses, type ItemResponse } from "../src/response-items";
import { readItemResponsesJson } from "../src/response-json";
import { jsonText, junk, keysIn, mutatedSubmission, randomSource } from "./generated-json";
import { intakeAnswers } from "./surveys";

const KEYS = [...keysIn(intakeAnswers), "intake.Qx", "zz", "0"];

/** What reading without meta gives: the parsed reading with every item's meta at its zero value. */
const withoutMeta = (items: ItemResponse[]) =>
  items.map((item) => ({ ...item, position: 0, rendered: null, displayed: null, responded: null }));

describe("reading item responses from JSON text", () => {
  it("reads every generated submission as JSON.parse and readItemResponses do, meta included", () => {
    fc.assert(
      fc.property(fc.integer(), fc.boolean(), (seed, plain) => {
        const rnd = randomSource(seed);
        const text = jsonText(mutatedSubmission(intakeAnswers, rnd, KEYS), rnd, plain);
        const parsed = readItemResponses(JSON.parse(text) as unknown[]);
        expect(readItemResponsesJson(text, true)).toStrictEqual(parsed);
        expect(readItemResponsesJson(text, false)).toStrictEqual(withoutMeta(parsed));
      }),
      { numRuns: 400 },
    );
  });

  it("reads arrays of any JSON values as the parsed reading does", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const rnd = randomSource(seed);
        const elements = Array.from({ length: Math.floor(rnd() * 5) }, () => junk(rnd));
        const text = jsonText(elements, rnd);
        expect(readItemResponsesJson(text, true)).toStrictEqual(readItemResponses(JSON.parse(text) as unknown[]));
      }),
      { numRuns: 300 },
    );
  });

  it("reads a document as PostgreSQL writes it, and the members it reads however they are spelt", () => {
    const text =
      '[{"key": "s.Q1", "meta": {"position": 2, "rendered": [1700000000, 1.9], "responded": []}, "response": ' +
      '{"key": "rg", "items": [{"key": "scg", "items": [{"key": "a\\u0062", "value": "x\\ny \\"q\\" \\/ \\ud83d\\ude00"}]}]}}, ' +
      '{"k\\u0065y": 12, "response": {"key": 1.50, "value": true, "dtype": false, "items": []}}, null, 3, "s", [], ' +
      '{"key": "s.Q3", "response": null, "key": "s.Q4"}]';
    expect(readItemResponsesJson(text, true)).toStrictEqual([
      {
        key: "s.Q1",
        position: 2,
        rendered: [1700000000, 1],
        displayed: null,
        responded: [],
        response: {
          key: "rg",
          value: "",
          dtype: "",
          items: [
            {
              key: "scg",
              value: "",
              dtype: "",
              items: [{ key: "ab", value: 'x\ny "q" / 😀', dtype: "", items: [] }],
            },
          ],
        },
      },
      {
        key: "12",
        position: 0,
        rendered: null,
        displayed: null,
        responded: null,
        response: { key: "1.5", value: "true", dtype: "false", items: [] },
      },
      { key: "s.Q4", position: 0, rendered: null, displayed: null, responded: null, response: null },
    ]);
    expect(readItemResponsesJson(text, true)).toStrictEqual(readItemResponses(JSON.parse(text) as unknown[]));
  });

  it("leaves what is no array, or no JSON where it reads, to the caller", () => {
    for (const text of ["null", '{"key": "a"}', '"[]"', "3", "", " ", "[", "[1,]", '[{"key": "a}]', '[{"key" "a"}]'])
      expect(readItemResponsesJson(text, false)).toBeNull();
    for (const text of [
      '[{"key": "a"}] x',
      '[{"key": "\\x"}]',
      '[{"key": "\\u12g4"}]',
      '[{"key": 01}]',
      '[{"key": -}]',
    ])
      expect(readItemResponsesJson(text, true)).toBeNull();
    expect(readItemResponsesJson(" [ ] ", false)).toEqual([]);
  });
});
