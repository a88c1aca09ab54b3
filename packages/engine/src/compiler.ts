// Turns validated rule JSON into closures once, so evaluation never re-walks or re-checks JSON.
// A node is synchronous unless its subtree reaches a service port; then, and only then, it returns
// a promise.
import type { CompiledAction, CompiledArg, CompiledExpression, EvalContext } from "./eval-context";
import { FAILED, describeFailure, fail, failedAt, nowSeconds, propagate, reject, rejectedAt } from "./eval-context";
import type { ActionSpec, ArgSpec, ExpressionSpec, ParticipantFieldUsage, ValueType } from "./function-spec";
import { anyArg, argSpecAt } from "./function-spec";
import { goTypeName } from "./go-compatible-format";
import { actionSpec, expressionSpec } from "./registry";
import { finiteTimestamp } from "./finite-numbers";
import { setEntry } from "./state-writes";
import type { Expression, ExpressionArg } from "./types";

const EXTRA_ARG = anyArg("argument");

const JS_TYPES: Record<ValueType, string | undefined> = {
  str: "string",
  num: "number",
  bool: "boolean",
  any: undefined,
};

/** What recordSubmission uses: on a SUBMIT event every action uses it besides its own fields. */
export const SUBMISSION_RECORD_FIELDS: ParticipantFieldUsage = {
  reads: ["lastSubmissions"],
  writes: ["lastSubmissions"],
};

/**
 * On a SUBMIT event every action evaluation, nested ones included, first records
 * lastSubmissions[response.key] = arrivedAt (or now). The value does not change between actions,
 * so after the first one this writes nothing.
 */
export function recordSubmission(ctx: EvalContext): boolean {
  const response = ctx.event.response;
  const key = response?.key;
  if (typeof key !== "string" || key === "") return false;
  const arrived = response?.arrivedAt;
  // an arrival time that is no valid timestamp is treated as missing: the time is now
  const valid = typeof arrived === "number" && arrived !== 0 ? finiteTimestamp(arrived, "arrivedAt") : null;
  const at = typeof valid === "number" ? valid : nowSeconds(ctx);
  return setEntry(ctx, "lastSubmissions", key, at);
}

function compileArg(arg: ExpressionArg, slot: ArgSpec, path: string): CompiledArg {
  const exp = arg.exp;
  if (arg.dtype === "exp" && exp !== null && exp !== undefined) {
    const expPath = `${path}.exp`;
    if (slot.role === "action") {
      const action = compileAction(exp, expPath);
      return { role: "action", action, isAsync: action.isAsync, path: expPath };
    }
    const expression = compileExpression(exp, expPath);
    return { role: "expression", expression, isAsync: expression.isAsync, path: expPath };
  }
  const num = typeof arg.num === "number" ? arg.num : 0;
  const value = arg.dtype === "num" ? num : typeof arg.str === "string" ? arg.str : "";
  return { role: "literal", value, num, isAsync: false, path };
}

function compileArgs(node: Expression, spec: ExpressionSpec | ActionSpec, path: string): CompiledArg[] {
  const data = Array.isArray(node.data) ? node.data : [];
  return data.map((arg, i) => compileArg(arg, argSpecAt(spec, i) ?? EXTRA_ARG, `${path}.data[${i}]`));
}

/** How the ordinary functions get their arguments: in order, each checked against its declared type. */
interface ArgPlan {
  readonly count: number;
  /** The argument values when every evaluated argument is a literal (most conditions); reused on every call. */
  readonly constants: readonly unknown[] | null;
  readonly runs: ReadonlyArray<((ctx: EvalContext) => unknown) | null>;
  readonly asyncAt: readonly boolean[];
  readonly jsTypes: ReadonlyArray<string | undefined>;
  readonly castErrors: readonly string[];
  readonly anyAsync: boolean;
}

function planArgs(spec: ExpressionSpec | ActionSpec, args: readonly CompiledArg[]): ArgPlan {
  const count = Math.min(args.length, spec.evaluatedArgs ? spec.evaluatedArgs(args.length) : args.length);
  const runs: Array<((ctx: EvalContext) => unknown) | null> = [];
  const asyncAt: boolean[] = [];
  const jsTypes: Array<string | undefined> = [];
  const castErrors: string[] = [];
  for (let i = 0; i < count; i++) {
    const arg = args[i] as CompiledArg;
    const slot = argSpecAt(spec, i) ?? EXTRA_ARG;
    if (slot.deferred) runs.push(null);
    else if (arg.role === "expression") runs.push(arg.expression.run);
    else if (arg.role === "literal") {
      const value = arg.value;
      runs.push(() => value);
    } else runs.push(() => undefined);
    asyncAt.push(!slot.deferred && arg.isAsync);
    jsTypes.push(JS_TYPES[slot.type]);
    castErrors.push(slot.castError);
  }
  const literal = args.slice(0, count).every((a, i) => a.role === "literal" && !argSpecAt(spec, i)?.deferred);
  // shared by every call: implementations read their arguments and never change them
  const constants = literal ? args.slice(0, count).map((a) => (a.role === "literal" ? a.value : undefined)) : null;
  return { count, constants, runs, asyncAt, jsTypes, castErrors, anyAsync: asyncAt.includes(true) };
}

/**
 * Evaluates the planned arguments synchronously into `values`; returns false with ctx.error set
 * (and the failure already propagated) when one fails or has the wrong type.
 */
function evaluateArgsSync(ctx: EvalContext, plan: ArgPlan, values: unknown[]): boolean {
  for (let i = 0; i < plan.count; i++) {
    const run = plan.runs[i];
    if (!run) continue;
    if (!acceptArgument(ctx, plan, i, run(ctx), values)) return false;
  }
  return true;
}

/** Stores argument i, or fails the evaluation when it failed or has the wrong type. */
function acceptArgument(ctx: EvalContext, plan: ArgPlan, i: number, v: unknown, values: unknown[]): boolean {
  if (v === FAILED) {
    propagate(ctx);
    return false;
  }
  const jsType = plan.jsTypes[i];
  if (jsType !== undefined && typeof v !== jsType) {
    fail(ctx, plan.castErrors[i] as string);
    return false;
  }
  values[i] = v;
  return true;
}

async function evaluateArgsAsync(ctx: EvalContext, plan: ArgPlan, values: unknown[]): Promise<boolean> {
  for (let i = 0; i < plan.count; i++) {
    const run = plan.runs[i];
    if (!run) continue;
    const v: unknown = plan.asyncAt[i] ? await run(ctx) : run(ctx);
    if (!acceptArgument(ctx, plan, i, v, values)) return false;
  }
  return true;
}

/** The one argument of a one-argument function (not, neg, …), to skip the generic loop. */
function singleArgument(plan: ArgPlan): [(ctx: EvalContext) => unknown, string | undefined, string] | null {
  const run = plan.runs[0];
  return plan.count === 1 && run ? [run, plan.jsTypes[0], plan.castErrors[0] as string] : null;
}

// Failure paths: a node that fails marks its own path unless a node below it already did
// (failedAt / rejectedAt); only the failure branches pay for it.
function compileOrdinaryExpression(
  spec: ExpressionSpec,
  args: readonly CompiledArg[],
  path: string,
): CompiledExpression {
  const evaluate = spec.evaluate;
  if (!evaluate) throw new Error(`registry: ${spec.name} has neither evaluate nor compile`);
  const plan = planArgs(spec, args);
  if (!spec.usesServices && !plan.anyAsync) {
    const constants = plan.constants as unknown[] | null;
    // literals were type-checked by the validator, so there is nothing to evaluate or check
    if (constants) {
      return {
        isAsync: false,
        run: (ctx) => {
          const v = evaluate(ctx, constants, args);
          return v === FAILED ? failedAt(ctx, path) : v;
        },
      };
    }
    const single = singleArgument(plan);
    if (single) {
      const [run0, type0, castError0] = single;
      return {
        isAsync: false,
        run: (ctx) => {
          const v = run0(ctx);
          if (v === FAILED) return propagate(ctx);
          if (type0 !== undefined && typeof v !== type0) {
            fail(ctx, castError0);
            return failedAt(ctx, path);
          }
          const result = evaluate(ctx, [v], args);
          return result === FAILED ? failedAt(ctx, path) : result;
        },
      };
    }
    return {
      isAsync: false,
      run: (ctx) => {
        const values: unknown[] = new Array(plan.count);
        const result = evaluateArgsSync(ctx, plan, values) ? evaluate(ctx, values, args) : FAILED;
        return result === FAILED ? failedAt(ctx, path) : result;
      },
    };
  }
  const name = spec.name;
  return {
    isAsync: true,
    run: async (ctx) => {
      try {
        const values: unknown[] = new Array(plan.count);
        if (!(await evaluateArgsAsync(ctx, plan, values))) return failedAt(ctx, path);
        const result = await evaluate(ctx, values, args);
        return result === FAILED ? failedAt(ctx, path) : result;
      } catch (reason) {
        // a port rejected
        fail(ctx, `${name}: ${describeFailure(reason)}`);
        return failedAt(ctx, path);
      }
    },
  };
}

/** externalEventEval with returnType "float" must deliver a number (the reference crashed otherwise). */
function requireNumber(name: string, inner: CompiledExpression, path: string): CompiledExpression {
  const check = (ctx: EvalContext, v: unknown): unknown => {
    if (v === FAILED || typeof v === "number") return v;
    fail(ctx, `${name}: expected a number, got ${goTypeName(v)}`);
    return failedAt(ctx, path);
  };
  if (!inner.isAsync) return { isAsync: false, run: (ctx) => check(ctx, inner.run(ctx)) };
  return { isAsync: true, run: async (ctx) => check(ctx, await inner.run(ctx)) };
}

/** For the few functions that compile themselves (and, or, sum): their own failures get their path. */
function tagFailures(inner: CompiledExpression, path: string): CompiledExpression {
  if (!inner.isAsync) {
    return {
      isAsync: false,
      run: (ctx) => {
        const v = inner.run(ctx);
        return v === FAILED ? failedAt(ctx, path) : v;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      const v = await inner.run(ctx);
      return v === FAILED ? failedAt(ctx, path) : v;
    },
  };
}

/** `path` is the node's JSON path in the rule set, reported with its failures. */
export function compileExpression(node: Expression, path = "expression"): CompiledExpression {
  const spec = expressionSpec(node.name);
  if (!spec) {
    const message = `expression name not known: ${node.name}`;
    return {
      isAsync: false,
      run: (ctx) => {
        fail(ctx, message);
        return failedAt(ctx, path);
      },
    };
  }
  const args = compileArgs(node, spec, path);
  const compiled = spec.compile
    ? tagFailures(spec.compile(args, node), path)
    : compileOrdinaryExpression(spec, args, path);
  return spec.returnsFor?.(node) === "num" && spec.returns !== "num"
    ? requireNumber(spec.name, compiled, path)
    : compiled;
}

function compileOrdinaryAction(spec: ActionSpec, args: readonly CompiledArg[], path: string): CompiledAction {
  const perform = spec.perform;
  if (!perform) throw new Error(`registry: ${spec.name} has neither perform nor compile`);
  const { name, precheck } = spec;
  const plan = planArgs(spec, args);
  const prefixError = (ctx: EvalContext): false => {
    reject(ctx, `${name}: ${ctx.error}`);
    return rejectedAt(ctx, path);
  };
  const own = (ctx: EvalContext, message: string): false => {
    reject(ctx, `${name}: ${message}`);
    return rejectedAt(ctx, path);
  };
  if (!spec.usesServices && !plan.anyAsync) {
    const constants = plan.constants as unknown[] | null;
    return {
      isAsync: false,
      run: (ctx) => {
        const problem = precheck?.(ctx);
        if (problem) return own(ctx, problem);
        let values = constants;
        if (!values) {
          values = new Array<unknown>(plan.count);
          if (!evaluateArgsSync(ctx, plan, values)) return prefixError(ctx);
        }
        return perform(ctx, values) || prefixError(ctx);
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      try {
        const problem = precheck?.(ctx);
        if (problem) return own(ctx, problem);
        const values: unknown[] = new Array(plan.count);
        if (!(await evaluateArgsAsync(ctx, plan, values))) return prefixError(ctx);
        return (await perform(ctx, values)) || prefixError(ctx);
      } catch (reason) {
        // a port rejected
        return own(ctx, describeFailure(reason));
      }
    },
  };
}

/** Every action, control flow included, starts with the SUBMIT bookkeeping. */
function withSubmissionRecord(name: string, inner: CompiledAction, path: string): CompiledAction {
  const message = `${name}: no response key found`;
  const missingKey = (ctx: EvalContext): false => {
    reject(ctx, message);
    return rejectedAt(ctx, path);
  };
  const writesInSteps = inner.writesInSteps === true;
  if (!inner.isAsync) {
    return {
      isAsync: false,
      writesInSteps,
      run: (ctx) => (ctx.isSubmit && !recordSubmission(ctx) ? missingKey(ctx) : inner.run(ctx)),
    };
  }
  return {
    isAsync: true,
    writesInSteps,
    run: (ctx) => (ctx.isSubmit && !recordSubmission(ctx) ? Promise.resolve(missingKey(ctx)) : inner.run(ctx)),
  };
}

/** `path` is the node's JSON path in the rule set, reported with its failures. */
export function compileAction(node: Expression, path = "action"): CompiledAction {
  const spec = actionSpec(node.name);
  if (!spec) {
    return {
      isAsync: false,
      run: (ctx) => {
        reject(ctx, "action name not known");
        return rejectedAt(ctx, path);
      },
    };
  }
  const args = compileArgs(node, spec, path);
  const compiled = spec.compile
    ? { ...spec.compile(args, node), writesInSteps: true }
    : compileOrdinaryAction(spec, args, path);
  return withSubmissionRecord(spec.name, compiled, path);
}
