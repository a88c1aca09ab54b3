// and, or, not with the reference's coercions. and/or decide themselves how far to evaluate, so
// they compile their own closures: a synchronous one when no argument reaches a service port.
import type { CompiledArg, CompiledExpression, EvalContext } from "../eval-context";
import { FAILED, propagate } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily } from "../function-spec";

/** The argument as a closure; literals become constants. */
export function argRunner(arg: CompiledArg): (ctx: EvalContext) => unknown {
  if (arg.role === "expression") return arg.expression.run;
  if (arg.role === "literal") {
    const value = arg.value;
    return () => value;
  }
  return () => undefined;
}

const CONTINUE = Symbol("continue");

/**
 * Builds an expression that folds over its arguments in order. `step` sees each value (FAILED
 * included) and returns the result, or CONTINUE to look at the next argument.
 */
function sequential(
  args: readonly CompiledArg[],
  step: (v: unknown, ctx: EvalContext) => unknown,
  end: unknown,
): CompiledExpression {
  const runs = args.map(argRunner);
  if (!args.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        for (const run of runs) {
          const r = step(run(ctx), ctx);
          if (r !== CONTINUE) return r;
        }
        return end;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      for (const run of runs) {
        const r = step(await run(ctx), ctx);
        if (r !== CONTINUE) return r;
      }
      return end;
    },
  };
}

export const logicExpressions = expressionFamily("logic", [
  {
    name: "and",
    summary: "false at the first false or 0 (strings and other values are neutral); an erroring argument is an error",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "logic", op: "and" },
    args: [anyArg("a"), anyArg("b")],
    rest: (i) => anyArg(`arg${i}`),
    compile: (args) =>
      sequential(args, (v, ctx) => (v === FAILED ? propagate(ctx) : v === false || v === 0 ? false : CONTINUE), true),
  },
  {
    name: "or",
    summary: "true at the first true or number > 0; erroring arguments are skipped",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "logic", op: "or" },
    args: [anyArg("a"), anyArg("b")],
    rest: (i) => anyArg(`arg${i}`),
    compile: (args) =>
      sequential(args, (v) => (v === true || (typeof v === "number" && v > 0) ? true : CONTINUE), false),
  },
  {
    name: "not",
    summary: "negates a boolean; a number is true only when 0; other values give false",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "logic", op: "not" },
    args: [anyArg("value")],
    evaluate: (_ctx, [v]) => (typeof v === "boolean" ? !v : typeof v === "number" ? v === 0 : false),
  },
]);
