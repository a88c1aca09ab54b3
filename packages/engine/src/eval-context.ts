import { EMPTY_PARTICIPANT, hasOnlyKnownFields, workingState } from "./participant-state";
import type { EngineEnv, EngineServices, ParticipantState, Report, RuleError, SideEffect, StudyEvent } from "./types";

/**
 * Returned instead of a value when an expression fails; the message is in `ctx.error`.
 * A sentinel rather than an exception keeps the hot path free of throw/catch and of allocations.
 */
export const FAILED: unique symbol = Symbol("expression failed");
export type Failed = typeof FAILED;

/**
 * Everything an evaluation reads and writes. `state` is copied on the first write of a rule (see
 * state-writes), `reports` and `effects` are replaced on every write, so a snapshot taken at a rule
 * start is just the three references.
 */
export interface EvalContext {
  state: ParticipantState;
  reports: Report[];
  effects: SideEffect[];
  readonly event: StudyEvent;
  /** The participant read by the `incomingState:` expressions (empty outside MERGE). */
  readonly incoming: ParticipantState;
  readonly env: EngineEnv;
  readonly services: EngineServices;
  /** SUBMIT events record lastSubmissions before every action. */
  readonly isSubmit: boolean;
  /** The state object the current rule created and may change in place (see state-writes). */
  ownedState: ParticipantState | null;
  /** Which of ownedState's maps and lists the current rule created (bit set, see state-writes). */
  ownedFields: number;
  /** The state has only the known fields, so copies may be built field by field. */
  plainState: boolean;
  /** Message of the most recent failure. */
  error: string;
  /**
   * JSON path of the innermost node that failed (e.g. "rules[2].data[1].exp"), set by the first
   * node to fail and kept while the failure travels up; null while nothing has failed.
   */
  errorPath: string | null;
  /** Index of the top-level rule running now, for the failures it reports. */
  ruleIndex: number;
  /** Actions of an IFTHEN that failed while the rule went on (see control-actions). */
  skippedActions: RuleError[] | null;
  /** What evaluateExpression reports as the value of a failed expression, if not the typed zero. */
  failValue: unknown;
}

/** A fresh context for one evaluation of rules or an expression. */
export function createContext(state: ParticipantState, event: StudyEvent, env: EngineEnv): EvalContext {
  const merge = event.mergeWithParticipant;
  return {
    state,
    reports: [],
    effects: [],
    event,
    incoming: merge === undefined || merge === null ? EMPTY_PARTICIPANT : workingState(merge),
    env,
    services: env.services,
    isSubmit: event.type === "SUBMIT",
    ownedState: null,
    ownedFields: 0,
    plainState: hasOnlyKnownFields(state),
    error: "",
    errorPath: null,
    ruleIndex: 0,
    skippedActions: null,
    failValue: undefined,
  };
}

/** Marks `path` as where the failure happened unless a node below it already did; returns FAILED. */
export function failedAt(ctx: EvalContext, path: string): Failed {
  if (ctx.errorPath === null) ctx.errorPath = path;
  return FAILED;
}

/** The action counterpart of failedAt: returns false. */
export function rejectedAt(ctx: EvalContext, path: string): false {
  if (ctx.errorPath === null) ctx.errorPath = path;
  return false;
}

/** Records an expression failure and returns the sentinel, so implementations can `return fail(...)`. */
export function fail(ctx: EvalContext, message: string, value?: unknown): Failed {
  ctx.error = message;
  ctx.failValue = value;
  return FAILED;
}

/** Passes a child's failure up: the child's special failure value is not this node's. */
export function propagate(ctx: EvalContext): Failed {
  ctx.failValue = undefined;
  return FAILED;
}

/** Records an action failure; actions report success as a boolean. */
export function reject(ctx: EvalContext, message: string): false {
  ctx.error = message;
  return false;
}

export function nowSeconds(ctx: EvalContext): number {
  return Math.floor(ctx.env.clock() / 1000);
}

/** Message of anything a port rejected with. */
export function describeFailure(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (typeof reason === "string") return reason;
  try {
    return JSON.stringify(reason) ?? String(reason);
  } catch {
    return "unknown error";
  }
}

/**
 * A compiled expression. `run` returns the value or FAILED; when `isAsync` is true it returns a
 * promise of that instead (only subtrees that reach a service port are async).
 */
export interface CompiledExpression {
  readonly isAsync: boolean;
  readonly run: (ctx: EvalContext) => unknown;
}

/** A compiled action: true on success, false with `ctx.error` set on failure (a promise if async). */
export interface CompiledAction {
  readonly isAsync: boolean;
  /**
   * Control flow (IF, DO, IFTHEN) may have written part of its work when it fails; an ordinary
   * action writes its one change only once nothing can fail any more. Absent means ordinary.
   */
  readonly writesInSteps?: boolean;
  readonly run: (ctx: EvalContext) => boolean | Promise<boolean>;
}

/** One compiled argument, in the role its position has in the registry. */
export type CompiledArg = { readonly path: string } & (
  | { readonly role: "literal"; readonly value: string | number; readonly num: number; readonly isAsync: false }
  | { readonly role: "expression"; readonly expression: CompiledExpression; readonly isAsync: boolean }
  | { readonly role: "action"; readonly action: CompiledAction; readonly isAsync: boolean }
);
