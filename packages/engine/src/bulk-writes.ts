// Bulk writes in SQL: for a rule set whose every rule sets or removes flags or sets the study
// status with values fixed for the batch, under conditions the prefilter translates, a bulk run
// can make the whole change in the database, one statement per batch, without reading the rows
// into the process (see packages/domain/src/bulk/pushdown-sql.ts).
//
// Why it is exact, not merely sound. A rule's condition is translated as for the prefilter: a
// predicate `holds` over the rows where it can be true and `otherwise` over the rows where it can
// be anything else. Both over-approximate, and between them they cover every row, so where only
// `holds` is true the condition is true, where only `otherwise` is true it is not, and where both
// are true the translation cannot tell. The statement evaluates both for each rule on the state
// the rules before it left, and a batch with a row that cannot be told is evaluated in the engine
// instead, whole. The writes themselves are exact: each action's registry entry says what it
// writes for its argument values (`bulkWrite`), and only actions that cannot fail have one.
import { FAILED } from "./eval-context";
import type { StateWrite } from "./function-spec";
import { actionSpec } from "./registry";
import type { RowPredicate } from "./row-predicate";
import { TRUE, FALSE } from "./row-predicate";
import { Translator, notTrue, validated } from "./sql-prefilter";
import type { EngineEnv, Expression, ExpressionArg, StudyEvent } from "./types";

export type { StateWrite } from "./function-spec";

/** One top-level rule as the database runs it. */
export interface RuleWrites {
  /** Rows where the rule's condition can be true, over the state the rules before it left. */
  readonly holds: RowPredicate;
  /** Rows where it can be anything else. */
  readonly otherwise: RowPredicate;
  /** What the rule does where its condition holds, in order. */
  readonly writes: readonly StateWrite[];
}

/** A rule set as one SQL change per batch: its rules in order. */
export interface BulkWritePlan {
  readonly rules: readonly RuleWrites[];
}

const expressionOf = (arg: ExpressionArg | undefined): Expression | undefined =>
  arg?.dtype === "exp" && arg.exp !== null && arg.exp !== undefined ? arg.exp : undefined;

/**
 * The writes of an action run unconditionally: a simple action with a bulk write, or DO of such
 * actions (none of them can fail, so DO runs them all). Null for anything else.
 */
async function writesOf(node: Expression, translator: Translator): Promise<StateWrite[] | null> {
  const spec = actionSpec(node.name);
  if (!spec) return null;
  const data = Array.isArray(node.data) ? node.data : [];
  if (spec.prefilter?.kind === "do") return sequence(data, translator);
  if (!spec.bulkWrite || spec.precheck || spec.usesServices) return null;
  const values = await translator.constantArguments(spec, data);
  if (values === null || values === FAILED) return null;
  const write = spec.bulkWrite(values);
  return write && [write];
}

/** The writes of action arguments run in order; literals in action positions are never run. */
async function sequence(args: readonly ExpressionArg[], translator: Translator): Promise<StateWrite[] | null> {
  const writes: StateWrite[] = [];
  for (const arg of args) {
    const exp = expressionOf(arg);
    if (exp === undefined) continue;
    const own = await writesOf(exp, translator);
    if (!own) return null;
    writes.push(...own);
  }
  return writes;
}

async function ruleWrites(rule: Expression, translator: Translator): Promise<RuleWrites | null> {
  const spec = actionSpec(rule.name);
  const data = Array.isArray(rule.data) ? rule.data : [];
  if (spec?.prefilter?.kind === "ifthen") {
    // IFTHEN skips a failing action and goes on; these actions cannot fail, so it runs them all
    const writes = await sequence(data.slice(1), translator);
    if (!writes) return null;
    const outcomes = await translator.conditionOutcomes(data[0]);
    return outcomes && { holds: outcomes.true, otherwise: notTrue(outcomes), writes };
  }
  const writes = await writesOf(rule, translator);
  return writes && { holds: TRUE, otherwise: FALSE, writes };
}

/**
 * The SQL form of a rule set for one batch of a bulk run, or null when some rule does more than
 * set or remove flags and set the status with batch-constant values under a translatable
 * condition (IFTHEN, DO, or such an action on its own). `env` and `event` as for bulkPrefilter:
 * the batch's instant and ports, an event the same for every participant. Never for SUBMIT, which
 * records a submission for every participant.
 */
export async function bulkWritePlan(rules: unknown, event: StudyEvent, env: EngineEnv): Promise<BulkWritePlan | null> {
  if (event.type === "SUBMIT") return null;
  const checked = validated(rules);
  if (!checked) return null;
  const translator = new Translator(event, env, checked.readsPortsOnly);
  const planned: RuleWrites[] = [];
  for (const rule of checked.rules) {
    const writes = await ruleWrites(rule, translator);
    if (!writes) return null;
    planned.push(writes);
  }
  return { rules: planned };
}
