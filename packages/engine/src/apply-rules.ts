// The public entry points: compile a rule set once, then apply it to participants; apply a single
// action; evaluate a single expression. Nothing here throws on bad input: problems come back as
// errors in the result.
import { compileAction, compileExpression } from "./compiler";
import type { CompiledAction, EvalContext } from "./eval-context";
import { FAILED, createContext, describeFailure } from "./eval-context";
import { plainStatesEqual, statesEqual, workingState } from "./participant-state";
import { expressionSpec } from "./registry";
import { releaseState, replaceState } from "./state-writes";
import type {
  ApplyOptions,
  ApplyResult,
  CompiledRuleSet,
  EngineEnv,
  Expression,
  ParticipantState,
  Report,
  RuleError,
  SideEffect,
  StudyEvent,
} from "./types";
import { RuleValidationError, formatIssues, validateAction, validateExpression, validateRules } from "./validator";

class CompiledRules implements CompiledRuleSet {
  readonly ruleCount: number;

  constructor(
    readonly rules: readonly Expression[],
    readonly actions: readonly CompiledAction[],
  ) {
    this.ruleCount = actions.length;
  }
}

/** Validates and compiles a rule set; throws RuleValidationError listing every problem. */
export function compileRules(rules: unknown): CompiledRuleSet {
  const result = validateRules(rules);
  if (!result.ok) throw new RuleValidationError(result.errors);
  return new CompiledRules(
    result.rules,
    result.rules.map((rule, i) => compileAction(rule, `rules[${i}]`)),
  );
}

/** Rule sets compiled on behalf of callers that passed a look-alike object. */
const compiledLookAlikes = new WeakMap<object, CompiledRules | RuleValidationError>();

function compiledFrom(ruleSet: CompiledRuleSet): CompiledRules | RuleValidationError {
  if (ruleSet instanceof CompiledRules) return ruleSet;
  const known = compiledLookAlikes.get(ruleSet);
  if (known) return known;
  let compiled: CompiledRules | RuleValidationError;
  try {
    compiled = compileRules((ruleSet as { rules?: unknown }).rules) as CompiledRules;
  } catch (error) {
    compiled =
      error instanceof RuleValidationError
        ? error
        : new RuleValidationError([{ path: "rules", message: describeFailure(error) }]);
  }
  compiledLookAlikes.set(ruleSet, compiled);
  return compiled;
}

function unchanged(state: ParticipantState, ruleCount: number, error: RuleError): ApplyResult {
  // nothing ran: there are no skipped actions to report
  return {
    state,
    reports: [],
    effects: [],
    changedPerRule: new Array<boolean>(ruleCount).fill(false),
    error,
    errors: [error],
  };
}

/** One application of a rule set to one participant. */
interface Run {
  readonly actions: readonly CompiledAction[];
  readonly ctx: EvalContext;
  readonly stopOnError: boolean;
  readonly changedPerRule: boolean[];
  errors: RuleError[] | null;
  /** How many skipped actions were reported before the current rule (a failed rule takes its own back). */
  skippedBefore: number;
}

/** Resets the per-rule bookkeeping at the start of rule i. */
function startRule(run: Run, i: number): void {
  const ctx = run.ctx;
  ctx.ruleIndex = i;
  ctx.errorPath = null;
  run.skippedBefore = ctx.skippedActions?.length ?? 0;
}

function internalError(ctx: EvalContext, error: unknown): false {
  // a bug, or data so malformed that the guards did not catch it: a rule error, not a crash
  ctx.error = `internal error: ${describeFailure(error)}`;
  return false;
}

/** Books the outcome of rule i; returns false when processing must stop. */
function settle(
  run: Run,
  i: number,
  ok: boolean,
  before: ParticipantState,
  plainBefore: boolean,
  reports: Report[],
  effects: SideEffect[],
): boolean {
  const ctx = run.ctx;
  if (ok) {
    if (ctx.state !== before) {
      const equal =
        plainBefore && ctx.plainState ? plainStatesEqual(before, ctx.state) : statesEqual(before, ctx.state);
      run.changedPerRule[i] = !equal;
    }
    return true;
  }
  // a failed rule leaves nothing behind, with either policy
  replaceState(ctx, before);
  ctx.reports = reports;
  ctx.effects = effects;
  if (ctx.skippedActions) ctx.skippedActions.length = run.skippedBefore;
  (run.errors ??= []).push({ ruleIndex: i, path: ctx.errorPath ?? `rules[${i}]`, message: `rule ${i}: ${ctx.error}` });
  return !run.stopOnError;
}

function finish(run: Run): ApplyResult {
  const { ctx, errors } = run;
  const result: ApplyResult = {
    state: ctx.state,
    reports: ctx.reports,
    effects: ctx.effects,
    changedPerRule: run.changedPerRule,
  };
  if (errors) {
    result.error = errors[0];
    result.errors = errors;
  }
  if (ctx.skippedActions && ctx.skippedActions.length > 0) result.skippedActions = ctx.skippedActions;
  return result;
}

/** Continues from rule `from` once a rule needs a service port. */
async function continueAsync(run: Run, from: number): Promise<ApplyResult> {
  const ctx = run.ctx;
  for (let i = from; i < run.actions.length; i++) {
    const action = run.actions[i] as CompiledAction;
    const { state, reports, effects, plainState } = ctx;
    releaseState(ctx);
    startRule(run, i);
    let ok: boolean;
    try {
      ok = await action.run(ctx);
    } catch (error) {
      ok = internalError(ctx, error);
    }
    if (!settle(run, i, ok, state, plainState, reports, effects)) break;
  }
  return finish(run);
}

/**
 * Runs synchronously for as long as the rules are synchronous, so a rule set without port calls
 * allocates no promise per rule.
 */
function applyCompiled(
  actions: readonly CompiledAction[],
  input: ParticipantState,
  event: StudyEvent,
  env: EngineEnv,
  options: ApplyOptions | undefined,
): ApplyResult | Promise<ApplyResult> {
  const ctx = createContext(workingState(input), event ?? ({} as StudyEvent), env);
  const run: Run = {
    actions,
    ctx,
    stopOnError: options?.onRuleError !== "continue",
    changedPerRule: new Array<boolean>(actions.length).fill(false),
    errors: null,
    skippedBefore: 0,
  };
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i] as CompiledAction;
    if (action.isAsync) return continueAsync(run, i);
    const { state, reports, effects, plainState } = ctx;
    releaseState(ctx);
    startRule(run, i);
    let ok: boolean;
    try {
      ok = action.run(ctx) as boolean;
    } catch (error) {
      ok = internalError(ctx, error);
    }
    if (!settle(run, i, ok, state, plainState, reports, effects)) break;
  }
  return finish(run);
}

/**
 * Applies every rule in order, each seeing the state the previous one produced. The input state is
 * never mutated. With the default policy the first failing rule stops processing; the result then
 * holds the state, reports and effects from before that rule.
 */
export function applyRules(
  compiled: CompiledRuleSet,
  state: ParticipantState,
  event: StudyEvent,
  env: EngineEnv,
  options?: ApplyOptions,
): Promise<ApplyResult> {
  try {
    const rules = compiledFrom(compiled);
    if (rules instanceof RuleValidationError) {
      const count = Array.isArray(compiled.rules) ? compiled.rules.length : 0;
      return Promise.resolve(
        unchanged(workingState(state), count, { ruleIndex: 0, path: "rules", message: formatIssues(rules.issues) }),
      );
    }
    return Promise.resolve(applyCompiled(rules.actions, state, event, env, options));
  } catch (error) {
    return Promise.resolve(
      unchanged(workingState(state), 0, {
        ruleIndex: 0,
        path: "rules",
        message: `internal error: ${describeFailure(error)}`,
      }),
    );
  }
}

/** Applies one action (validated first; an invalid one is an error result, not an exception). */
export async function applyAction(
  action: Expression,
  state: ParticipantState,
  event: StudyEvent,
  env: EngineEnv,
): Promise<ApplyResult> {
  try {
    const issues = validateAction(action);
    if (issues.length > 0)
      return unchanged(workingState(state), 1, { ruleIndex: 0, path: "action", message: formatIssues(issues) });
    return await applyCompiled([compileAction(action)], state, event, env, undefined);
  } catch (error) {
    return unchanged(workingState(state), 1, {
      ruleIndex: 0,
      path: "action",
      message: `internal error: ${describeFailure(error)}`,
    });
  }
}

const ZERO_VALUES = { bool: false, num: 0, str: "", any: null } as const;

/**
 * Evaluates one expression against a state and event. On failure the value is the typed zero
 * (false, 0, "") the reference returned with its errors, or the function's own failure value
 * (countResponseItems gives -1).
 */
export async function evaluateExpression(
  expression: Expression,
  state: ParticipantState,
  event: StudyEvent,
  env: EngineEnv,
): Promise<{ value: unknown; error?: string }> {
  try {
    const issues = validateExpression(expression);
    if (issues.length > 0) return { value: null, error: formatIssues(issues) };
    const compiled = compileExpression(expression);
    const ctx = createContext(workingState(state), event ?? ({} as StudyEvent), env);
    const value: unknown = compiled.isAsync ? await compiled.run(ctx) : compiled.run(ctx);
    if (value !== FAILED) return { value };
    const spec = expressionSpec(expression.name);
    const returns = spec?.returnsFor ? spec.returnsFor(expression) : (spec?.returns ?? "any");
    return { value: ctx.failValue !== undefined ? ctx.failValue : ZERO_VALUES[returns], error: ctx.error };
  } catch (error) {
    return { value: null, error: `internal error: ${describeFailure(error)}` };
  }
}
