// The bulk prefilter: from a rule set, a predicate over stored participant rows that holds for
// every participant whose evaluation can do anything at all (change its state, produce a report
// or an effect, fail, call a port that changes something). A bulk run reads only the rows it
// selects; the others were evaluated in principle and did nothing.
//
// Why it is sound. Rules run in order, each on the state the previous one left. Call a rule
// active for a participant when it runs any action other than control flow. A participant whose
// evaluation does anything has a first active rule; every rule before it ran conditions only,
// which change nothing, so that rule saw the stored state. The predicate is therefore the OR of,
// per rule, a predicate that holds wherever the rule can be active on the stored state. Inside
// IF, IFTHEN and DO the same argument applies to the actions in order.
//
// Conditions are translated three-valued: for each expression, predicates that hold wherever it
// can be true, false, or fail (and, for and / or / not, 0, a positive number or another value).
// `not` swaps them, so the negation of something untranslatable stays "any row". IF runs its else
// branch when the condition is anything but true, failures included.
//
// What the translation relies on:
// - the event is the same for every participant of the batch (the confidential id aside, which
//   no batch-constant function reads), and is not SUBMIT: on SUBMIT every action, control flow
//   included, records lastSubmissions, so every participant may change;
// - `env.clock` is the batch's one instant, also used to evaluate its participants;
// - study data read through a port does not change during the batch when no function of the
//   rule set uses a port except to read it (a study variable written by a concurrent request is
//   seen by the batches after it);
// - stored rows are engine states: maps are JSON objects, lists are JSON arrays of objects
//   (values inside them of any type are handled).
import { FAILED } from "./eval-context";
import type { ActionSpec, ExpressionSpec, ValueType } from "./function-spec";
import { argSpecAt } from "./function-spec";
import { evaluateExpression } from "./apply-rules";
import { EMPTY_PARTICIPANT } from "./participant-state";
import { actionSpec, expressionSpec } from "./registry";
import type { CompareOp, RowPredicate } from "./row-predicate";
import { FALSE, TRUE, allOf, anyOf, constant, flipped, isSendable } from "./row-predicate";
import type { EngineEnv, Expression, ExpressionArg, StudyEvent } from "./types";
import { validateRules } from "./validator";

/**
 * Where an expression's value can be of each kind, the kinds that and / or / not tell apart.
 * `value` is set for participant readers whose comparisons with constants can be translated.
 */
export interface Outcomes {
  readonly true: RowPredicate;
  readonly false: RowPredicate;
  readonly zero: RowPredicate;
  readonly positive: RowPredicate;
  /** Any other value: a negative number, NaN, text, null, … */
  readonly other: RowPredicate;
  readonly failed: RowPredicate;
}

type Translation =
  | { readonly kind: "constant"; readonly value: unknown }
  | {
      readonly kind: "rows";
      readonly outcomes: Outcomes;
      readonly compare?: (op: CompareOp, constant: string | number) => Outcomes | null;
    };

const UNKNOWN: Outcomes = { true: TRUE, false: TRUE, zero: TRUE, positive: TRUE, other: TRUE, failed: TRUE };
const ANYTHING: Translation = { kind: "rows", outcomes: UNKNOWN };

function outcomesOfConstant(value: unknown): Outcomes {
  const is = (kind: keyof Outcomes) => constant(kindOf(value) === kind);
  return {
    true: is("true"),
    false: is("false"),
    zero: is("zero"),
    positive: is("positive"),
    other: is("other"),
    failed: is("failed"),
  };
}

function kindOf(value: unknown): keyof Outcomes {
  if (value === FAILED) return "failed";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") return value === 0 ? "zero" : value > 0 ? "positive" : "other";
  return "other";
}

/** Where a value can be anything but `true`: where a condition with these outcomes does not hold. */
export const notTrue = (o: Outcomes): RowPredicate => anyOf(o.false, o.zero, o.positive, o.other, o.failed);

const outcomesOf = (t: Translation): Outcomes => (t.kind === "constant" ? outcomesOfConstant(t.value) : t.outcomes);

/** Outcomes of a boolean-valued translation: no number, no other value. */
const booleanOutcomes = (whenTrue: RowPredicate, whenFalse: RowPredicate, failed: RowPredicate): Outcomes => ({
  true: whenTrue,
  false: whenFalse,
  zero: FALSE,
  positive: FALSE,
  other: FALSE,
  failed,
});

const JS_TYPES: Record<ValueType, string | undefined> = {
  str: "string",
  num: "number",
  bool: "boolean",
  any: undefined,
};

/** The expression node of an argument, or undefined for a literal. */
function expressionOf(arg: ExpressionArg | undefined): Expression | undefined {
  return arg?.dtype === "exp" && arg.exp !== null && arg.exp !== undefined ? arg.exp : undefined;
}

/** A literal argument's value as the compiler reads it. */
function literalValue(arg: ExpressionArg): string | number {
  const num = typeof arg.num === "number" ? arg.num : 0;
  return arg.dtype === "num" ? num : typeof arg.str === "string" ? arg.str : "";
}

function namesIn(node: unknown, visit: (name: string) => void): void {
  if (node === null || typeof node !== "object") return;
  const { name, data } = node as { name?: unknown; data?: unknown };
  if (typeof name === "string") visit(name);
  if (Array.isArray(data)) for (const arg of data) namesIn((arg as ExpressionArg | null)?.exp, visit);
}

/** A port is used only to read: nothing a rule evaluates changes study data or calls out. */
function readsPortsOnly(rules: readonly Expression[]): boolean {
  let only = true;
  for (const rule of rules) {
    namesIn(rule, (name) => {
      const spec = expressionSpec(name) ?? actionSpec(name);
      if (spec?.usesServices && !(spec.kind === "expression" && spec.prefilter?.kind === "study-data")) only = false;
    });
  }
  return only;
}

/** Evaluating the condition has no effect of its own: it uses no port except to read study data. */
function isPure(node: Expression): boolean {
  let pure = true;
  namesIn(node, (name) => {
    const spec = expressionSpec(name);
    if (!spec || (spec.usesServices && spec.prefilter?.kind !== "study-data")) pure = false;
  });
  return pure;
}

export class Translator {
  constructor(
    private readonly event: StudyEvent,
    private readonly env: EngineEnv,
    private readonly studyDataIsConstant: boolean,
  ) {}

  /** Whether the function's value is the same for every participant once its arguments are. */
  private isPureFunction(spec: ExpressionSpec): boolean {
    const kind = spec.prefilter?.kind;
    return (
      kind === "batch-constant" ||
      kind === "comparison" ||
      kind === "logic" ||
      (kind === "study-data" && this.studyDataIsConstant)
    );
  }

  /** Whether the node's value is the same for every participant of the batch. */
  private isConstant(node: Expression): boolean {
    const spec = expressionSpec(node.name);
    if (!spec || !this.isPureFunction(spec)) return false;
    const data = Array.isArray(node.data) ? node.data : [];
    return data.every((arg) => {
      const exp = expressionOf(arg);
      return exp === undefined || this.isConstant(exp);
    });
  }

  /** Constant nodes evaluated for this batch: the prefilter and the write plan read them once. */
  private readonly values = new Map<Expression, Promise<unknown>>();

  private evaluate(node: Expression): Promise<unknown> {
    let value = this.values.get(node);
    if (!value) {
      // the participant is never read: the node is constant
      value = evaluateExpression(node, EMPTY_PARTICIPANT, this.event, this.env).then((result) =>
        result.error === undefined ? result.value : FAILED,
      );
      this.values.set(node, value);
    }
    return value;
  }

  /** An argument's value, for arguments known to be constant. */
  private async argumentValue(arg: ExpressionArg): Promise<unknown> {
    const exp = expressionOf(arg);
    return exp === undefined ? literalValue(arg) : this.evaluate(exp);
  }

  async expression(node: Expression): Promise<Translation> {
    const spec = expressionSpec(node.name);
    if (!spec) return ANYTHING;
    if (this.isConstant(node)) return { kind: "constant", value: await this.evaluate(node) };
    const data = Array.isArray(node.data) ? node.data : [];
    const prefilter = spec.prefilter;
    switch (prefilter?.kind) {
      case "participant":
        return this.participantReader(spec, data, prefilter.form);
      case "comparison":
        return this.comparison(prefilter.op, data);
      case "logic":
        return this.logic(prefilter.op, data);
      default:
        return ANYTHING;
    }
  }

  private async participantReader(
    spec: ExpressionSpec,
    data: readonly ExpressionArg[],
    form: NonNullable<Extract<ExpressionSpec["prefilter"], { kind: "participant" }>>["form"],
  ): Promise<Translation> {
    const values = await this.constantArguments(spec, data);
    if (values === null) return ANYTHING;
    // a failing or mistyped argument fails the reader for everyone, as evaluation would
    if (values === FAILED) return { kind: "constant", value: FAILED };
    const described = form(values);
    if (!described) return ANYTHING;
    if (described.kind === "bool")
      return { kind: "rows", outcomes: booleanOutcomes(described.whenTrue, described.whenFalse, FALSE) };
    const compare = (op: CompareOp, value: string | number): Outcomes | null => {
      const outcomes = described.compare(op, value);
      return outcomes && booleanOutcomes(outcomes.true, outcomes.false, outcomes.failed);
    };
    // a value used on its own (not compared) may be anything
    return { kind: "rows", outcomes: UNKNOWN, compare };
  }

  private async comparison(op: CompareOp, data: readonly ExpressionArg[]): Promise<Translation> {
    const [a, b] = data;
    if (a === undefined || b === undefined || data.length !== 2) return ANYTHING;
    const left = await this.operand(a);
    const right = await this.operand(b);
    // eq / lt / … evaluate both arguments; a failing one fails the comparison
    if ((left.kind === "constant" && left.value === FAILED) || (right.kind === "constant" && right.value === FAILED)) {
      return { kind: "constant", value: FAILED };
    }
    let outcomes: Outcomes | null = null;
    if (left.kind === "rows" && right.kind === "constant") outcomes = this.compareWith(left, op, right.value);
    else if (left.kind === "constant" && right.kind === "rows")
      outcomes = this.compareWith(right, flipped(op), left.value);
    return outcomes ? { kind: "rows", outcomes } : ANYTHING;
  }

  private compareWith(reader: Translation, op: CompareOp, value: unknown): Outcomes | null {
    if (reader.kind !== "rows" || !reader.compare) return null;
    // a value of any other type fails every comparison, but leaving it untranslated is simpler and still sound
    if (!isSendable(value)) return null;
    return reader.compare(op, value);
  }

  private async operand(arg: ExpressionArg): Promise<Translation> {
    const exp = expressionOf(arg);
    return exp === undefined ? { kind: "constant", value: literalValue(arg) } : this.expression(exp);
  }

  private async logic(op: "and" | "or" | "not", data: readonly ExpressionArg[]): Promise<Translation> {
    const parts: Outcomes[] = [];
    for (const arg of data) parts.push(outcomesOf(await this.operand(arg)));
    if (op === "not") {
      const [x] = parts;
      if (!x || parts.length !== 1) return ANYTHING;
      // not: a boolean negated, a number true only when 0, anything else false; a failure stays one
      return {
        kind: "rows",
        outcomes: booleanOutcomes(anyOf(x.false, x.zero), anyOf(x.true, x.positive, x.other), x.failed),
      };
    }
    if (op === "and") {
      // false at the first false or 0, an error at the first failure, else true
      return {
        kind: "rows",
        outcomes: booleanOutcomes(
          allOf(...parts.map((p) => anyOf(p.true, p.positive, p.other))),
          anyOf(...parts.map((p) => anyOf(p.false, p.zero))),
          anyOf(...parts.map((p) => p.failed)),
        ),
      };
    }
    // or: true at the first true or positive number; failures are skipped; never fails
    return {
      kind: "rows",
      outcomes: booleanOutcomes(
        anyOf(...parts.map((p) => anyOf(p.true, p.positive))),
        allOf(...parts.map((p) => anyOf(p.false, p.zero, p.other, p.failed))),
        FALSE,
      ),
    };
  }

  /**
   * The values of a function's evaluated arguments when each is the same for every participant
   * (literals and constant expressions); FAILED when one of them fails or has the wrong type, as
   * evaluation would for everyone; null when one depends on the participant.
   */
  async constantArguments(
    spec: ExpressionSpec | ActionSpec,
    data: readonly ExpressionArg[],
  ): Promise<unknown[] | typeof FAILED | null> {
    const count = Math.min(data.length, spec.evaluatedArgs ? spec.evaluatedArgs(data.length) : data.length);
    const values: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const arg = data[i] as ExpressionArg;
      const exp = expressionOf(arg);
      if (exp !== undefined && !this.isConstant(exp)) return null;
      const value = await this.argumentValue(arg);
      const jsType = JS_TYPES[argSpecAt(spec, i)?.type ?? "any"];
      if (value === FAILED || (jsType !== undefined && typeof value !== jsType)) return FAILED;
      values.push(value);
    }
    return values;
  }

  /**
   * The outcomes of a condition argument, each a predicate over the rows where the condition can
   * have that kind of value; null when evaluating it has effects of its own.
   */
  async conditionOutcomes(arg: ExpressionArg | undefined): Promise<Outcomes | null> {
    const exp = expressionOf(arg);
    // a literal condition holds when its num is not 0, whatever its dtype
    if (exp === undefined) return outcomesOfConstant(arg !== undefined && typeof arg.num === "number" && arg.num !== 0);
    if (!isPure(exp)) return null;
    return outcomesOf(await this.expression(exp));
  }

  /** Where the condition holds (is exactly true) and where it does not (anything else). */
  private async condition(arg: ExpressionArg | undefined): Promise<{ holds: RowPredicate; not: RowPredicate } | null> {
    const o = await this.conditionOutcomes(arg);
    return o && { holds: o.true, not: notTrue(o) };
  }

  /** Where running the action on the stored state can do anything. */
  async action(node: Expression): Promise<RowPredicate> {
    const spec: ActionSpec | undefined = actionSpec(node.name);
    const kind = spec?.prefilter?.kind;
    if (!kind) return TRUE;
    const data = Array.isArray(node.data) ? node.data : [];
    // literals in action positions are never run
    const actionAt = (i: number) => {
      const exp = expressionOf(data[i]);
      return exp === undefined ? Promise.resolve(FALSE) : this.action(exp);
    };
    if (kind === "do") {
      const parts = await Promise.all(data.map((_, i) => actionAt(i)));
      return anyOf(...parts);
    }
    const condition = await this.condition(data[0]);
    // a condition with effects of its own (an external call, a counter increment) runs for everyone
    if (!condition) return TRUE;
    if (kind === "ifthen") {
      const parts = await Promise.all(data.slice(1).map((_, i) => actionAt(i + 1)));
      return allOf(condition.holds, anyOf(...parts));
    }
    return anyOf(allOf(condition.holds, await actionAt(1)), allOf(condition.not, await actionAt(2)));
  }
}

/** Rule sets already validated, by identity: a bulk run asks for every batch with the same array. */
const validatedRules = new WeakMap<object, { rules: readonly Expression[]; readsPortsOnly: boolean } | null>();

function validated(rules: unknown): { rules: readonly Expression[]; readsPortsOnly: boolean } | null {
  const cacheable = typeof rules === "object" && rules !== null;
  const known = cacheable ? validatedRules.get(rules) : undefined;
  if (known !== undefined) return known;
  const result = validateRules(rules);
  const entry = result.ok ? { rules: result.rules, readsPortsOnly: readsPortsOnly(result.rules) } : null;
  if (cacheable) validatedRules.set(rules, entry);
  return entry;
}

/** A rule set's validated rules and the translator of one batch. */
export interface BatchTranslation {
  readonly rules: readonly Expression[];
  readonly translator: Translator;
}

/**
 * The rule set's validated rules and a translator for one batch; null for a SUBMIT event (every
 * action records a submission) or an invalid rule set, which nothing can be said of.
 */
export function batchTranslation(rules: unknown, event: StudyEvent, env: EngineEnv): BatchTranslation | null {
  if (event.type === "SUBMIT") return null;
  const checked = validated(rules);
  return checked && { rules: checked.rules, translator: new Translator(event, env, checked.readsPortsOnly) };
}

/**
 * The prefilter of a rule set for one batch of a bulk run: a predicate over stored participant
 * rows that holds for every participant whose evaluation under `event` and `env` can do anything
 * (see the top of this file). `env.clock` must be the instant the batch's participants are
 * evaluated at, and `env.services` the batch's ports (study data is read through them once).
 * An invalid rule set, or a SUBMIT event, selects every participant. A rule set is validated once
 * per array object (a bulk run passes the same one for every batch), so it must not change between
 * calls.
 */
export function bulkPrefilter(rules: unknown, event: StudyEvent, env: EngineEnv): Promise<RowPredicate> {
  return prefilterOf(batchTranslation(rules, event, env));
}

/** bulkPrefilter over a batch translation (null: every row). */
export async function prefilterOf(translation: BatchTranslation | null): Promise<RowPredicate> {
  if (!translation) return TRUE;
  const parts: RowPredicate[] = [];
  for (const rule of translation.rules) {
    const part = await translation.translator.action(rule);
    if (part.kind === "const" && part.value) return TRUE;
    parts.push(part);
  }
  return anyOf(...parts);
}
