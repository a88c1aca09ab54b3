// Arithmetic and number parsing.
import type { CompiledArg, CompiledExpression } from "../eval-context";
import { FAILED, fail } from "../eval-context";
import { MAX_WHOLE, finiteInteger } from "../finite-numbers";
import { BATCH_CONSTANT, NO_PARTICIPANT_FIELDS, anyArg, expressionFamily, numArg } from "../function-spec";
import { parseGoFloat } from "../go-compatible-format";
import { argRunner } from "./logic-expressions";

const NUMBER_1 = "argument 1 should be resolved as type number (float64)";
const NUMBER_2 = "argument 2 should be resolved as type number (float64)";

function add(total: number, v: unknown): number {
  if (v === true) return total + 1;
  return typeof v === "number" ? total + v : total;
}

/** Erroring and non-numeric arguments are skipped, as in the reference. */
function compileSum(args: readonly CompiledArg[]): CompiledExpression {
  const runs = args.map(argRunner);
  if (!args.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        let total = 0;
        for (const run of runs) {
          const v = run(ctx);
          if (v !== FAILED) total = add(total, v);
        }
        return total;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      let total = 0;
      for (const run of runs) {
        const v: unknown = await run(ctx);
        if (v !== FAILED) total = add(total, v);
      }
      return total;
    },
  };
}

export const mathExpressions = expressionFamily("math", [
  {
    name: "sum",
    summary: "adds numbers, true counts 1; erroring or other arguments are skipped; no arguments → 0",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    rest: (i) => anyArg(`arg${i}`, { optional: true }),
    compile: compileSum,
  },
  {
    name: "neg",
    summary: "-x",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [numArg("x", NUMBER_1)],
    evaluate: (_ctx, [x]) => -(x as number),
  },
  {
    name: "parseValueAsNum",
    summary: "a number as it is; a string parsed as a number (Go syntax, error if invalid)",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [anyArg("value")],
    evaluate: (ctx, [v]) => {
      if (typeof v === "number") return v;
      if (typeof v !== "string") return fail(ctx, "argument 1 should be resolved as type string");
      const parsed = parseGoFloat(v);
      return parsed.ok ? parsed.value : fail(ctx, parsed.error);
    },
  },
  {
    name: "generateRandomNumber",
    summary:
      "uniform integer in [min, max] (both truncated) from the injected random source; max < min, a non-finite bound or one beyond ±(2^53 − 1), or max − min > 2^53 − 1 is an error",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [numArg("min", NUMBER_1), numArg("max", NUMBER_2)],
    // A range too wide for exact integers fails rather than being clamped: clamping would quietly
    // draw from a different range than the rule asks for, and no study needs 2^53 outcomes.
    evaluate: (ctx, [a, b]) => {
      const min = finiteInteger(a as number, "generateRandomNumber: min");
      if (typeof min === "string") return fail(ctx, min);
      const max = finiteInteger(b as number, "generateRandomNumber: max");
      if (typeof max === "string") return fail(ctx, max);
      if (max < min) return fail(ctx, "generateRandomNumber: max must not be smaller than min");
      const span = max - min;
      if (span > MAX_WHOLE) {
        return fail(ctx, `generateRandomNumber: max - min must be at most ${MAX_WHOLE}, got min ${min}, max ${max}`);
      }
      const r = ctx.env.random();
      const unit = r >= 0 && r < 1 ? r : 0;
      // span + 1 ≤ 2^53 and unit < 1, so the offset is an exact integer in [0, span]
      return min + Math.min(span, Math.floor(unit * (span + 1)));
    },
  },
]);
