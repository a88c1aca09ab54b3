// A JSON document received from outside is checked for text PostgreSQL cannot store, nesting
// deeper than a limit and numbers without a JSON form (jsonInputProblem). It is walked first
// without naming paths; the answer must be exactly what the path-naming walk alone gives
// (firstJsonInputProblem, the check as it was before): the same first problem, in the same words,
// or none.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstJsonInputProblem, jsonInputProblem } from "../src/text-values";

/** Text with, now and then, a NUL, a lone surrogate or a well-formed pair. */
const text = fc
  .array(fc.constantFrom("a", "é", "\u0000", "\ud800", "\udc00", "\ud83d\ude00", " "), { maxLength: 4 })
  .map((parts) => parts.join(""));
const number = fc.oneof(fc.integer(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5));
const document: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "medium", withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(text, tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("jsonInputProblem", () => {
  it("gives what the path-naming walk alone gave, for any document and limits", () => {
    fc.assert(
      fc.property(document, fc.integer({ min: 0, max: 6 }), fc.boolean(), (root, maxDepth, finiteNumbers) => {
        const limits = { maxDepth, tooDeep: `deeper than ${maxDepth}`, finiteNumbers };
        expect(jsonInputProblem(root, "body", limits)).toBe(firstJsonInputProblem(root, "body", limits));
      }),
      { numRuns: 5_000 },
    );
  });

  it("names the first problem's path, or none", () => {
    const limits = { maxDepth: 8, tooDeep: "too deep", finiteNumbers: true };
    expect(jsonInputProblem({ a: [{ b: "ok" }, { c: "x\u0000" }] }, "body", limits)).toBe(
      "body.a[1].c must not contain a NUL character (U+0000)",
    );
    expect(jsonInputProblem({ ["k\ud800"]: 1 }, "body", limits)).toBe(
      "a key of body must not contain a lone UTF-16 surrogate",
    );
    expect(jsonInputProblem({ n: [Number.NaN] }, "body", limits)).toBe("body.n[0] must be a finite number");
    expect(jsonInputProblem([[[[[[[[[[]]]]]]]]]], "body", limits)).toBe("too deep");
    expect(jsonInputProblem({ survey: [{ key: "Q1", items: [{ value: "fine" }] }] }, "body", limits)).toBeNull();
  });

  it("refuses a document nested far deeper than its limit without running out of stack", () => {
    let deep: unknown = "end";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(jsonInputProblem(deep, "body", { maxDepth: 256, tooDeep: "too deep" })).toBe("too deep");
  });
});
