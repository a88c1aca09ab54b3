// eq, lt, lte, gt, gte: two strings compare byte-wise (UTF-8 order), two numbers numerically; any
// other pairing is an error with the reference's wording.
import type { EvalContext } from "../eval-context";
import { fail } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily } from "../function-spec";
import { goTypeName } from "../go-compatible-format";
import type { CompareOp } from "../row-predicate";
import { compareUtf8 } from "../text-values";

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
