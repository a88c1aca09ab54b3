// Bulk writes in SQL: for a rule set whose every rule writes flags, the study status or assigned
// surveys with values fixed for the batch, a bulk run can make the whole change in the database,
// one statement per batch, without reading the rows into the process (see
// packages/domain/src/bulk/pushdown-sql.ts). A rule becomes a list of steps: writes guarded by a
// condition the prefilter translates. Conditions that are the same for the whole batch (the event
// type, the clock, study variables) are decided here, so the usual shape of a study's rules, one
// IFTHEN per event type holding IFTHENs on the participant, becomes a few steps, and the handlers
// of other events (however complex their actions) none.
//
// Why it is exact, not merely sound. A step's condition is translated as for the prefilter: a
// predicate `holds` over the rows where it can be true and `otherwise` over the rows where it can
// be anything else. Both over-approximate, and between them they cover every row, so where only
// `holds` is true the condition is true, where only `otherwise` is true it is not, and where both
// are true the translation cannot tell. The statement evaluates both for each step on the state
// the steps before it left, and a batch with a row that cannot be told is evaluated in the engine
// instead, whole. The writes themselves are exact: each action's registry entry says what it
// writes for its argument values (`bulkWrite`), and only actions that cannot fail have one.
import { FAILED } from "./eval-context";
import type { StateWrite } from "./function-spec";
import { actionSpec } from "./registry";
import type { RowPredicate } from "./row-predicate";
import { TRUE, FALSE } from "./row-predicate";
import { batchTranslation, notTrue, prefilterOf, type BatchTranslation, type Translator } from "./sql-prefilter";
import type { EngineEnv, Expression, ExpressionArg, StudyEvent } from "./types";

export type { StateWrite } from "./function-spec";

/** Writes made where a condition, evaluated on the state the steps before it left, holds. */
export interface WriteStep {
  /** Rows where the condition can be true. */
  readonly holds: RowPredicate;
  /** Rows where it can be anything else. */
  readonly otherwise: RowPredicate;
  /** What the step does where its condition holds, in order. */
  readonly writes: readonly StateWrite[];
}

/** One top-level rule as the database runs it: its steps in order (none: it never changes anything). */
export interface RuleWrites {
  readonly steps: readonly WriteStep[];
}

/** A rule set as one SQL change per batch: its rules in order. */
export interface BulkWritePlan {
  readonly rules: readonly RuleWrites[];
}

const expressionOf = (arg: ExpressionArg | undefined): Expression | undefined =>
  arg?.dtype === "exp" && arg.exp !== null && arg.exp !== undefined ? arg.exp : undefined;

const isConst = (p: RowPredicate, value: boolean) => p.kind === "const" && p.value === value;
const always = (step: WriteStep) => isConst(step.holds, true) && isConst(step.otherwise, false);

/** Adjacent unconditional steps are one. */
function merged(steps: readonly WriteStep[]): WriteStep[] {
  const out: WriteStep[] = [];
  for (const step of steps) {
    const previous = out.at(-1);
    if (previous && always(previous) && always(step))
      out[out.length - 1] = { ...previous, writes: [...previous.writes, ...step.writes] };
    else out.push(step);
  }
  return out;
}

/**
 * A condition decided for the whole batch: "holds" or "fails" (it is anything but true) for every
 * participant, or "varies" with the participant; null when evaluating it has effects of its own.
 */
async function conditionOf(
  arg: ExpressionArg | undefined,
  translator: Translator,
): Promise<{ decided: "holds" | "fails" | "varies"; holds: RowPredicate; otherwise: RowPredicate } | null> {
  const outcomes = await translator.conditionOutcomes(arg);
  if (!outcomes) return null;
  const holds = outcomes.true;
  const otherwise = notTrue(outcomes);
  const decided = isConst(holds, false)
    ? "fails"
    : isConst(holds, true) && isConst(otherwise, false)
      ? "holds"
      : "varies";
  return { decided, holds, otherwise };
}

/**
 * The steps of an action reached on every participant, or null when the database cannot run it.
 * An action with a bulk write is an unconditional step; DO and the actions of IFTHEN run in order
 * (none of these actions can fail, so DO runs them all and IFTHEN skips none); a condition that is
 * the same for the whole batch picks what runs. A condition that varies may guard only
 * unconditional writes: the step evaluates it once, before them.
 */
async function stepsOf(node: Expression, translator: Translator): Promise<WriteStep[] | null> {
  const spec = actionSpec(node.name);
  if (!spec) return null;
  const data = Array.isArray(node.data) ? node.data : [];
  const kind = spec.prefilter?.kind;
  if (kind === "do") return sequence(data, translator);
  if (kind === "ifthen" || kind === "if") {
    const condition = await conditionOf(data[0], translator);
    if (!condition) return null;
    const branches =
      kind === "ifthen" ? { then: data.slice(1), else: [] } : { then: data.slice(1, 2), else: data.slice(2, 3) };
    if (condition.decided === "holds") return sequence(branches.then, translator);
    if (condition.decided === "fails") return sequence(branches.else, translator);
    const then = await sequence(branches.then, translator);
    const otherwise = await sequence(branches.else, translator);
    // an else branch would need the condition's value from before the then branch's writes
    if (!then || !then.every(always) || otherwise?.length !== 0) return null;
    const writes = then.flatMap((step) => step.writes);
    if (writes.length === 0) return [];
    // a condition the translation knows nothing of would send every batch to the engine
    if (isConst(condition.holds, true) && isConst(condition.otherwise, true)) return null;
    return [{ holds: condition.holds, otherwise: condition.otherwise, writes }];
  }
  if (!spec.bulkWrite || spec.precheck || spec.usesServices) return null;
  const values = await translator.constantArguments(spec, data);
  if (values === null || values === FAILED) return null;
  const write = spec.bulkWrite(values);
  return write && [{ holds: TRUE, otherwise: FALSE, writes: [write] }];
}

/** The steps of action arguments run in order; literals in action positions are never run. */
async function sequence(args: readonly ExpressionArg[], translator: Translator): Promise<WriteStep[] | null> {
  const steps: WriteStep[] = [];
  for (const arg of args) {
    const exp = expressionOf(arg);
    if (exp === undefined) continue;
    const own = await stepsOf(exp, translator);
    if (!own) return null;
    steps.push(...own);
  }
  return merged(steps);
}

/**
 * The SQL form of a rule set for one batch of a bulk run, or null when some rule can do more than
 * write flags, the status and assigned surveys with batch-constant values (see "Bulk writes in SQL" in
 * the README). `env` and `event` as for bulkPrefilter: the batch's instant and ports, an event the
 * same for every participant. Never for SUBMIT, which records a submission for every participant.
 */
export function bulkWritePlan(rules: unknown, event: StudyEvent, env: EngineEnv): Promise<BulkWritePlan | null> {
  return writePlanOf(batchTranslation(rules, event, env));
}

/**
 * What a bulk run needs for one batch, from one translation, so the constants of the rules (a
 * study variable read through a port among them) are evaluated once: the prefilter, and with
 * `writes` the write plan (none where the prefilter selects no row).
 */
export async function bulkBatchPlan(
  rules: unknown,
  event: StudyEvent,
  env: EngineEnv,
  options: { writes: boolean },
): Promise<{ prefilter: RowPredicate; writes: BulkWritePlan | null }> {
  const translation = batchTranslation(rules, event, env);
  const prefilter = await prefilterOf(translation);
  const selectsNone = isConst(prefilter, false);
  return { prefilter, writes: options.writes && !selectsNone ? await writePlanOf(translation) : null };
}

async function writePlanOf(translation: BatchTranslation | null): Promise<BulkWritePlan | null> {
  if (!translation) return null;
  const planned: RuleWrites[] = [];
  for (const rule of translation.rules) {
    const steps = await stepsOf(rule, translation.translator);
    if (!steps) return null;
    planned.push({ steps });
  }
  return { rules: planned };
}
