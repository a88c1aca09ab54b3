/**
 * The one-pass BSON → JSON reader of the import gives what the bson package and toPlain give, for
 * every BSON type a document can hold: the types it reads itself and those it hands back.
 */
import {
  Binary,
  Decimal128,
  deserialize,
  Double,
  Int32,
  Long,
  ObjectId,
  serialize,
  Timestamp,
  type Document,
} from "bson";
import { describe, expect, it } from "vitest";
import { bsonDocumentJson, JsonText, rawArrayJson } from "../../src/case-import/bson-json";
import { toPlain } from "../../src/case-import/case-values";

/** What the import wrote before the one-pass reader: the bson package's objects through toPlain. */
const throughObjects = (bytes: Buffer): unknown =>
  JSON.parse(
    JSON.stringify(toPlain(deserialize(bytes, { promoteLongs: true, promoteValues: true, promoteBuffers: false }))),
  );

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const TEXTS = [
  "",
  "plain",
  'quote " and \\ backslash',
  "tab\tnew\nline\rcr",
  "ünïcödé ✓ 😀",
  "\u2028\u2029",
  "a\u0001b",
];

function value(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 14 : 16));
  switch (pick) {
    case 0:
      return TEXTS[Math.floor(next() * TEXTS.length)];
    case 1:
      return new Int32(Math.floor(next() * 2_000_000) - 1_000_000);
    case 2:
      return new Double(
        [0.5, -0, 1e21, 1.5e-7, Number.NaN, Number.POSITIVE_INFINITY, 123456.789][Math.floor(next() * 7)]!,
      );
    case 3:
      return Long.fromNumber(Math.floor(next() * 2 ** 40) * (next() < 0.5 ? -1 : 1));
    case 4:
      return [
        Long.fromString("9007199254740992"),
        Long.fromString("-9007199254740993"),
        Long.fromString("1152921504606846976"),
      ][Math.floor(next() * 3)];
    case 5:
      return next() < 0.5;
    case 6:
      return null;
    case 7:
      return new ObjectId(Buffer.from(Array.from({ length: 12 }, () => Math.floor(next() * 256))));
    case 8:
      return new Date(Math.floor(next() * 4_000_000_000_000) - 1_000_000_000_000);
    case 9:
      return Decimal128.fromString("12.50");
    case 10:
      return new Binary(Buffer.from([1, 2, 3, 250]));
    case 11:
      return new Timestamp({ t: 1_700_000_000, i: 3 });
    case 12:
      return undefined;
    case 13:
      return Long.fromNumber(1_700_000_000);
    case 14:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
    default: {
      const document: Document = {};
      for (let i = Math.floor(next() * 5); i > 0; i--) document[`k${Math.floor(next() * 6)}`] = value(next, depth + 1);
      return document;
    }
  }
}

describe("BSON to JSON in one pass", () => {
  it("gives what the bson package and toPlain give, over 3,000 generated documents of every type", () => {
    const next = random(20261129);
    let inOnePass = 0;
    for (let i = 0; i < 3_000; i++) {
      const document: Document = { key: `intake.Q${i}` };
      for (let j = Math.floor(next() * 6); j > 0; j--) document[`f${j}`] = value(next, 0);
      const bytes = Buffer.from(serialize(document, { ignoreUndefined: false }));
      expect(JSON.parse(bsonDocumentJson(bytes)), JSON.stringify(toPlain(document))).toEqual(throughObjects(bytes));
      if (
        !/Decimal|Binary|Timestamp|9007199254740992|9007199254740993|1152921504606846976/.test(
          String(Object.values(document)),
        )
      ) {
        inOnePass += 1;
      }
    }
    expect(inOnePass).toBeGreaterThan(0);
  });

  it("reads a participant app's answer item exactly", () => {
    const item = {
      key: "weekly.Q1",
      meta: { position: new Int32(0), localeCode: "nl", rendered: [Long.fromNumber(1_700_000_000)], displayed: null },
      response: {
        key: "rg",
        items: [
          { key: "scg", items: [{ key: "2" }] },
          { key: "other", value: 'said "hi"\n' },
        ],
      },
    };
    expect(bsonDocumentJson(Buffer.from(serialize(item)))).toBe(
      '{"key":"weekly.Q1","meta":{"position":0,"localeCode":"nl","rendered":[1700000000],"displayed":null},' +
        '"response":{"key":"rg","items":[{"key":"scg","items":[{"key":"2"}]},{"key":"other","value":"said \\"hi\\"\\n"}]}}',
    );
  });

  it("keys whose bytes hash alike are told apart; keys of any text are quoted as JSON quotes them", () => {
    // "Aa" and "BB" have the same 31-based hash
    const document = { Aa: 1, BB: 2, 'say "hi"': 3, "back\\slash": 4, ключ: 5, "tab\there": 6 };
    const bytes = Buffer.from(serialize({ first: document, again: document }));
    expect(bsonDocumentJson(bytes)).toBe(JSON.stringify({ first: document, again: document }));
  });

  it("a string holding U+FFFD itself is read as it is", () => {
    expect(bsonDocumentJson(Buffer.from(serialize({ key: "a\uFFFDb" })))).toBe('{"key":"a\uFFFDb"}');
  });

  it("a string that is not UTF-8 is refused as the bson package refuses it", () => {
    const bytes = Buffer.from(serialize({ key: "abc" }));
    // the string's bytes: 'a' becomes 0xff, which no UTF-8 text holds
    bytes[bytes.indexOf(Buffer.from("abc"))] = 0xff;
    expect(() => bsonDocumentJson(bytes)).toThrow();
  });

  it("an array field read raw: documents from their bytes, other elements as toPlain makes them, anything else as []", () => {
    const document = Buffer.from(
      serialize({ responses: [{ key: "a", when: new Date(0) }, "text", new Int32(3), null] }),
    );
    const read = deserialize(document, {
      promoteValues: true,
      promoteBuffers: false,
      fieldsAsRaw: { responses: true },
    });
    const json = rawArrayJson(read["responses"]);
    expect(json).toBeInstanceOf(JsonText);
    expect(json.toJSON()).toEqual([{ key: "a", when: "1970-01-01T00:00:00.000Z" }, "text", 3, null]);
    expect(rawArrayJson({ not: "an array" }).text).toBe("[]");
    expect(rawArrayJson(undefined).text).toBe("[]");
  });
});
