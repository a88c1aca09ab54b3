import { describe, expect, it } from "vitest";
import {
  formatFixed6,
  formatFloatV,
  formatPaddedCounter,
  formatTruncatedInt,
  formatValueV,
  goTypeName,
  parseGoFloat,
} from "./go-compatible-format";

describe("Go-compatible formatting", () => {
  it.each([
    [1, "1.000000"],
    [-2.5, "-2.500000"],
    [1 / 3, "0.333333"],
    [-0, "-0.000000"],
    [1e21, "1000000000000000000000.000000"],
    [0.0078125, "0.007812"],
    [-0.0078125, "-0.007812"],
    [0.0234375, "0.023438"],
    [1.0078125, "1.007812"],
    [0.0000005, "0.000000"],
    [0.0000015, "0.000002"],
    [NaN, "NaN"],
    [Infinity, "+Inf"],
  ])("formatFixed6(%s) is %s", (x, text) => expect(formatFixed6(x)).toBe(text));

  it.each([
    [3.9, "3"],
    [-3.9, "-3"],
    [2 ** 60, "1152921504606846976"],
    [NaN, "-9223372036854775808"],
    [1e30, "-9223372036854775808"],
  ])("formatTruncatedInt(%s) is %s", (x, text) => expect(formatTruncatedInt(x)).toBe(text));

  it.each([
    ["P-", 4, 6, "P-0006"],
    ["", 0, 12, "12"],
    ["", 2, 123, "123"],
    ["", 4, -5, "-005"],
    ["x", -3, 1, "x1  "],
  ])("formatPaddedCounter(%j, %s, %s) is %s", (prefix, width, value, text) =>
    expect(formatPaddedCounter(prefix, width, value)).toBe(text),
  );

  it.each([
    [1, "1"],
    [123456, "123456"],
    [1e6, "1e+06"],
    [1234567.5, "1.2345675e+06"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [-1.5e-7, "-1.5e-07"],
    [1e100, "1e+100"],
  ])("formatFloatV(%s) is %s", (x, text) => expect(formatFloatV(x)).toBe(text));

  it("%v of JSON values", () => {
    expect(formatValueV({ b: [1, "x"], a: null, c: true })).toBe("map[a:<nil> b:[1 x] c:true]");
    expect(goTypeName([])).toBe("[]interface {}");
    expect(goTypeName(null)).toBe("<nil>");
  });
});

describe("parseGoFloat", () => {
  it.each([
    ["12.5", 12.5],
    ["-.5", -0.5],
    ["1e3", 1000],
    ["+7", 7],
    ["Inf", Infinity],
    ["-infinity", -Infinity],
    ["0x1.8p1", 3],
    ["0x10p-4", 1],
  ])("accepts %s", (text, value) => expect(parseGoFloat(text)).toEqual({ ok: true, value }));

  it("accepts NaN", () => expect(parseGoFloat("nan")).toEqual({ ok: true, value: NaN }));

  it.each(["", " 1", "1 ", "1x", "1_000", "0x", "0x1", "."])("rejects %j", (text) =>
    expect(parseGoFloat(text)).toEqual({
      ok: false,
      error: `strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`,
    }),
  );

  it("reports values out of range", () => {
    expect(parseGoFloat("1e400")).toEqual({
      ok: false,
      error: 'strconv.ParseFloat: parsing "1e400": value out of range',
    });
  });
});
