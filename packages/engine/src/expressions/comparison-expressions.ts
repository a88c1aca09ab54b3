// eq, lt, lte, gt, gte: two strings compare byte-wise (UTF-8 order), two numbers numerically; any
// other pairing is an error with the reference's wording.
import type { EvalContext } from "../eval-context";
import { fail } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily } from "../function-spec";
import { goTypeName } from "../go-compatible-format";
import type { CompareOp } from "../row-predicate";

/** UTF-16 code units reordered so that comparing them gives code point (= UTF-8 byte) order. */
function codePointWeight(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** -1, 0 or 1 like Go's strings.Compare. */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointWeight(x) < codePointWeight(y) ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

type Test = (order: number) => boolean;

function comparison(name: CompareOp, summary: string, test: Test, unknownTypeWording: string) {
  return {
    name,
    summary,
    returns: "bool" as const,
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "comparison", op: name } as const,
    args: [anyArg("a"), anyArg("b")],
    evaluate: (ctx: EvalContext, [a, b]: unknown[]) => {
      if (typeof a === "string") {
        if (typeof b !== "string") return fail(ctx, "could not cast arguments");
        return test(compareUtf8(a, b));
      }
      if (typeof a === "number") {
        if (typeof b !== "number") return fail(ctx, "could not cast arguments");
        // NaN is neither smaller, equal nor larger, as with Go's float comparison
        if (Number.isNaN(a) || Number.isNaN(b)) return false;
        return test(a < b ? -1 : a > b ? 1 : 0);
      }
      return fail(ctx, `${unknownTypeWording} ${goTypeName(a)}`);
    },
  };
}

export const comparisonExpressions = expressionFamily("comparison", [
  comparison("eq", "a == b", (o) => o === 0, "I don't know about type"),
  comparison("lt", "a < b", (o) => o < 0, "I don't know about type"),
  comparison("lte", "a <= b", (o) => o <= 0, "I don't know about type"),
  comparison("gt", "a > b", (o) => o > 0, "unexpected type"),
  comparison("gte", "a >= b", (o) => o >= 0, "I don't know about type"),
]);
