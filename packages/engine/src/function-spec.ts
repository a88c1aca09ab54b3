// The schema of the registry: what the validator, the compiler and the docs know about each
// expression and action. Families describe themselves with the builders below.
import type { CompiledAction, CompiledArg, CompiledExpression, EvalContext } from "./eval-context";
import type { CompareOp, RowPredicate } from "./row-predicate";
import type { Expression, ParticipantField } from "./types";

/** Value types as the registry speaks of them; "any" means the position accepts every value. */
export type ValueType = "str" | "num" | "bool" | "any";

/** What an argument position holds: a value, an IF/IFTHEN condition, or an action to run. */
export type ArgRole = "expression" | "condition" | "action";

export interface ArgSpec {
  readonly name: string;
  readonly role: ArgRole;
  /** Expected value type. Wrong literals are rejected by the validator, wrong computed values at run time. */
  readonly type: ValueType;
  /** Run-time message when a computed value has the wrong type (the reference's wording). */
  readonly castError: string;
  readonly optional?: boolean;
  /** Must be a literal with dtype exactly "str" (the reference checks the dtype, not the value). */
  readonly literalOnly?: boolean;
  /** Must be dtype "exp" (checkConditionForOldResponses evaluates it per old response). */
  readonly expressionOnly?: boolean;
  /** Passed to the implementation compiled instead of evaluated. */
  readonly deferred?: boolean;
  /** Literal strings the position accepts. */
  readonly oneOf?: readonly string[];
  /** Extra check of a literal value; returns a message when it can never work. */
  readonly checkLiteral?: (value: string | number) => string | null;
}

/**
 * What a function itself does with the participant state; its arguments are declared by their own
 * functions. "all" is the whole state object, fields the engine does not know included: what an
 * external service is sent, or what its reply replaces.
 */
export interface ParticipantFieldUsage {
  /** Fields whose current value can change the function's value, effects or writes. */
  readonly reads: readonly ParticipantField[] | "all";
  /**
   * Fields it may replace. A bulk run writes a changed JSON column whole, so a written field must
   * be loaded as much as a read one.
   */
  readonly writes: readonly ParticipantField[] | "all";
}

/** For functions that see only their arguments, the event, the clock or the service ports. */
export const NO_PARTICIPANT_FIELDS: ParticipantFieldUsage = Object.freeze({ reads: [], writes: [] });

/** What a comparison of a participant value with a constant can give, as predicates over stored rows. */
export interface ComparisonOutcomes {
  /** Rows where the comparison may be true. */
  readonly true: RowPredicate;
  /** Rows where it may be false. */
  readonly false: RowPredicate;
  /** Rows where it may fail (values of different types). */
  readonly failed: RowPredicate;
}

/** What the bulk prefilter knows of a participant reader called with given argument values. */
export type ParticipantForm =
  /** A boolean reader (it never fails once its arguments are right): where it may be true, where false. */
  | { readonly kind: "bool"; readonly whenTrue: RowPredicate; readonly whenFalse: RowPredicate }
  /** A value reader: what comparing its value with a constant gives; null when that cannot be said. */
  | {
      readonly kind: "value";
      readonly compare: (op: CompareOp, constant: string | number) => ComparisonOutcomes | null;
    };

/**
 * How the bulk prefilter (sql-prefilter.ts) may treat an expression. A function without one is
 * opaque to it: a condition using it may hold for any participant, and one that uses a port
 * counts as having effects.
 */
export type ExpressionPrefilter =
  /**
   * Its value depends only on its arguments, the event (not the participant's confidential id),
   * the clock and the time zone: the same for a whole batch, evaluated once.
   */
  | { readonly kind: "batch-constant" }
  /**
   * Reads study data through a port and changes nothing: the same for a whole batch when no
   * function of the rule set uses a port to change anything.
   */
  | { readonly kind: "study-data" }
  /** Reads the participant; `form` describes it for argument values that are the same for every participant. */
  | { readonly kind: "participant"; readonly form: (args: readonly unknown[]) => ParticipantForm | null }
  /** A comparison (pure: batch-constant when its arguments are). */
  | { readonly kind: "comparison"; readonly op: CompareOp }
  /** and / or / not (pure: batch-constant when their arguments are). */
  | { readonly kind: "logic"; readonly op: "and" | "or" | "not" };

/** For functions whose value is the same for every participant of a batch. */
export const BATCH_CONSTANT: ExpressionPrefilter = Object.freeze({ kind: "batch-constant" });

/** For functions that read study data through a port without changing it. */
export const STUDY_DATA: ExpressionPrefilter = Object.freeze({ kind: "study-data" });

/**
 * How the bulk prefilter treats an action that runs others. Any other action counts as doing
 * something whenever it is reached.
 */
export type ActionPrefilter = { readonly kind: "if" | "ifthen" | "do" };

/**
 * What an action with arguments fixed for a batch does to the participant state, when a bulk run
 * can do it in SQL (see bulk-writes.ts). Only writes that never fail once their arguments are
 * known, and whose effect on the stored row is exactly this.
 */
export type StateWrite =
  | { readonly kind: "set-flag"; readonly key: string; readonly value: string }
  | { readonly kind: "remove-flag"; readonly key: string }
  | { readonly kind: "set-status"; readonly status: string }
  /** Appends the survey to assignedSurveys. */
  | {
      readonly kind: "add-survey";
      readonly survey: {
        readonly surveyKey: string;
        readonly validFrom: number;
        readonly validUntil: number;
        readonly category: string;
      };
    }
  /** Removes every assigned survey whose surveyKey is the key; all of them without a key. */
  | { readonly kind: "remove-surveys"; readonly surveyKey?: string };

interface SignatureFields {
  readonly minArgs: number;
  /** Infinity when the arguments are unbounded. */
  readonly maxArgs: number;
  readonly args: readonly ArgSpec[];
  /** Positions beyond `args`. */
  readonly rest?: (index: number) => ArgSpec;
  /** How many leading arguments are evaluated, for functions that ignore some of theirs. */
  readonly evaluatedArgs?: (count: number) => number;
}

/** Evaluated arguments in, value (or FAILED) out; a promise of that when the function uses a port. */
export type ExpressionEvaluate = (ctx: EvalContext, args: unknown[], compiled: readonly CompiledArg[]) => unknown;

export interface ExpressionSpec extends SignatureFields {
  readonly kind: "expression";
  readonly name: string;
  readonly family: string;
  readonly summary: string;
  readonly returns: ValueType;
  /** The return type when it depends on the node (externalEventEval's returnType). */
  readonly returnsFor?: (node: Expression) => ValueType;
  readonly usesServices: boolean;
  readonly participantFields: ParticipantFieldUsage;
  /** How the bulk prefilter may use it; absent: opaque. */
  readonly prefilter?: ExpressionPrefilter;
  /** For functions with ordinary argument evaluation (all but a few). */
  readonly evaluate?: ExpressionEvaluate;
  /** For functions that decide themselves which arguments to evaluate (and, or, sum). */
  readonly compile?: (args: readonly CompiledArg[], node: Expression) => CompiledExpression;
}

/** Changes `ctx.state` / `ctx.reports` / `ctx.effects` by replacement; false with ctx.error on failure. */
export type ActionPerform = (ctx: EvalContext, args: unknown[]) => boolean | Promise<boolean>;

export interface ActionSpec extends SignatureFields {
  readonly kind: "action";
  readonly name: string;
  readonly family: string;
  readonly summary: string;
  readonly usesServices: boolean;
  readonly participantFields: ParticipantFieldUsage;
  /** For control flow: how the bulk prefilter follows it; absent: the action does something when reached. */
  readonly prefilter?: ActionPrefilter;
  /**
   * Its write for argument values that are the same for every participant of a batch (already
   * checked against the argument types); null where it would fail or cannot be said. Absent: a
   * bulk run evaluates it in the engine.
   */
  readonly bulkWrite?: (args: readonly unknown[]) => StateWrite | null;
  /** Checked before any argument is evaluated; returns a failure message. */
  readonly precheck?: (ctx: EvalContext) => string | null;
  readonly perform?: ActionPerform;
  /** For control flow (IF, DO, IFTHEN), which runs its argument actions itself. */
  readonly compile?: (args: readonly CompiledArg[], node: Expression) => CompiledAction;
}

export type FunctionSpec = ExpressionSpec | ActionSpec;

// ---- argument builders -------------------------------------------------------------------------

type ArgOptions = Partial<Omit<ArgSpec, "name" | "role" | "type">>;

const DEFAULT_CAST_ERROR = "could not cast argument";

function arg(name: string, role: ArgRole, type: ValueType, options: ArgOptions): ArgSpec {
  return { name, role, type, castError: DEFAULT_CAST_ERROR, ...options };
}

export const strArg = (name: string, castError = DEFAULT_CAST_ERROR, options: ArgOptions = {}): ArgSpec =>
  arg(name, "expression", "str", { castError, ...options });

export const numArg = (name: string, castError = DEFAULT_CAST_ERROR, options: ArgOptions = {}): ArgSpec =>
  arg(name, "expression", "num", { castError, ...options });

export const boolArg = (name: string, castError = DEFAULT_CAST_ERROR, options: ArgOptions = {}): ArgSpec =>
  arg(name, "expression", "bool", { castError, ...options });

export const anyArg = (name: string, options: ArgOptions = {}): ArgSpec => arg(name, "expression", "any", options);

export const conditionArg = (name = "condition"): ArgSpec => arg(name, "condition", "any", {});

export const actionArg = (name = "action", options: ArgOptions = {}): ArgSpec => arg(name, "action", "any", options);

export const optional = (spec: ArgSpec): ArgSpec => ({ ...spec, optional: true });

// ---- spec builders -----------------------------------------------------------------------------

interface SignatureInput {
  args?: readonly ArgSpec[];
  /** Defaults to the number of non-optional `args`. */
  minArgs?: number;
  /** Defaults to `args.length`, or Infinity with `rest`. */
  maxArgs?: number;
  rest?: (index: number) => ArgSpec;
  evaluatedArgs?: (count: number) => number;
}

function signature(input: SignatureInput): SignatureFields {
  const args = input.args ?? [];
  return {
    args,
    minArgs: input.minArgs ?? args.filter((a) => !a.optional).length,
    maxArgs: input.maxArgs ?? (input.rest ? Infinity : args.length),
    ...(input.rest ? { rest: input.rest } : {}),
    ...(input.evaluatedArgs ? { evaluatedArgs: input.evaluatedArgs } : {}),
  };
}

type ExpressionInput = SignatureInput &
  Omit<ExpressionSpec, "kind" | keyof SignatureFields | "usesServices" | "family"> & { usesServices?: boolean };

type ActionInput = SignatureInput &
  Omit<ActionSpec, "kind" | keyof SignatureFields | "usesServices" | "family"> & { usesServices?: boolean };

/** Builds the expression specs of one family. */
export function expressionFamily(family: string, inputs: readonly ExpressionInput[]): ExpressionSpec[] {
  return inputs.map((input) => ({
    ...input,
    ...signature(input),
    kind: "expression",
    family,
    usesServices: input.usesServices ?? false,
  }));
}

/** Builds the action specs of one family. */
export function actionFamily(family: string, inputs: readonly ActionInput[]): ActionSpec[] {
  return inputs.map((input) => ({
    ...input,
    ...signature(input),
    kind: "action",
    family,
    usesServices: input.usesServices ?? false,
  }));
}

/** The spec of argument position `index`, or undefined beyond the signature. */
export function argSpecAt(spec: FunctionSpec, index: number): ArgSpec | undefined {
  if (index >= spec.maxArgs) return undefined;
  return spec.args[index] ?? spec.rest?.(index);
}
