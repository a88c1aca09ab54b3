import { describe, expect, it } from "vitest";
import { compareGoStrings, csvField, csvRecord, goJsonString } from "../src";
import { goJsonNumber } from "../src/go-json";
import { goRfc3339 } from "../src/go-time";

describe("Go's encoding/csv quoting", () => {
  it.each([
    ["", ""],
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["line\nbreak", '"line\nbreak"'],
    ["carriage\rreturn", '"carriage\rreturn"'],
    [" leading space", '" leading space"'],
    ["\tleading tab", '"\tleading tab"'],
    ["\u00a0no-break space", '"\u00a0no-break space"'],
    ["\u3000ideographic space", '"\u3000ideographic space"'],
    ["trailing space ", "trailing space "],
    ["\\.", '"\\."'],
    ["\\.x", "\\.x"],
    ["=1+1", "=1+1"],
  ])("%j → %j", (field, written) => {
    expect(csvField(field)).toBe(written);
  });

  it("guards formulas only when asked, then quotes by the usual rule", () => {
    expect(csvField("=1+1", true)).toBe("'=1+1");
    expect(csvField("+31 6", true)).toBe("'+31 6");
    expect(csvField("-5", true)).toBe("-5"); // a plain number is no formula
    expect(csvField("-2+3", true)).toBe("'-2+3");
    expect(csvField("@SUM(A1)", true)).toBe("'@SUM(A1)");
    expect(csvField("\tx", true)).toBe("'\tx");
    expect(csvField("\r=x", true)).toBe('"\'\r=x"');
    expect(csvField("a=1", true)).toBe("a=1");
  });

  it("ends records with \\n", () => {
    expect(csvRecord(["a", "", "b c"])).toBe("a,,b c\n");
  });
});

describe("Go's encoding/json", () => {
  it.each([
    ["plain", '"plain"'],
    ["<a href='x'>&</a>", "\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\""],
    ['quote " backslash \\', '"quote \\" backslash \\\\"'],
    ["\n\r\t\b\f", '"\\n\\r\\t\\b\\f"'],
    ["\u0001\u001f", '"\\u0001\\u001f"'],
    ["\u2028\u2029", '"\\u2028\\u2029"'],
    ["émoji 😀 \u007f", '"émoji 😀 \u007f"'],
    ["lone \ud800 surrogate", '"lone \\ufffd surrogate"'],
  ])("%j → %s", (s, json) => {
    expect(goJsonString(s)).toBe(json);
  });

  it("numbers as Go prints int64 and float64", () => {
    expect(goJsonNumber(1700000000)).toBe("1700000000");
    expect(goJsonNumber(1e20)).toBe("100000000000000000000");
    expect(goJsonNumber(1e21)).toBe("1e+21");
    expect(goJsonNumber(0.000001)).toBe("0.000001");
    expect(goJsonNumber(1e-7)).toBe("1e-7");
    expect(goJsonNumber(-0)).toBe("-0");
    expect(goJsonNumber(38.5)).toBe("38.5");
  });

  it("sorts keys by bytes (code points), not UTF-16 units", () => {
    const keys = ["b", "a", "B", "\uffff", "😀", "é"].sort(compareGoStrings);
    expect(keys).toEqual(["B", "a", "b", "é", "\uffff", "😀"]);
  });
});

describe("Go's RFC 3339 time format", () => {
  it("formats Unix seconds in UTC, with trimmed fractions and four-digit years", () => {
    expect(goRfc3339(0)).toBe("1970-01-01T00:00:00Z");
    expect(goRfc3339(1700000000)).toBe("2023-11-14T22:13:20Z");
    expect(goRfc3339(951782400)).toBe("2000-02-29T00:00:00Z");
    expect(goRfc3339(-1)).toBe("1969-12-31T23:59:59Z");
    expect(goRfc3339(-62135596800)).toBe("0001-01-01T00:00:00Z");
    expect(goRfc3339(253402300800)).toBe("10000-01-01T00:00:00Z");
    expect(goRfc3339(1700000000, 120_000_000)).toBe("2023-11-14T22:13:20.12Z");
  });
});
