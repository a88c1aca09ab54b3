// Whether a rule set can do anything at all for an event type, decided from the rule JSON without
// running it. The study timer asks it for TIMER: running a tick over every participant of a study
// whose rules ignore TIMER would cost a full pass for nothing. An answer that is too small loses
// the study its ticks, so whatever is not known for sure counts as acting.
//
// The analysis mirrors the compiler and the control actions (actions/control-actions.ts,
// expressions/logic-expressions.ts): what counts as an action argument, how a condition holds,
// how and/or/not combine. Those few names are the control flow of the language; every other
// action counts as acting, every other expression as unknown.
import type { EventType, Expression, ExpressionArg } from "./types";

/** An expression that fails, or evaluates to false: either way, not true. */
const NOT_TRUE = Symbol("not true");
/** Anything else: depends on the participant, the study's data or the clock. */
const UNKNOWN = Symbol("unknown");

/** What an argument evaluates to on every event of the type: a value, NOT_TRUE or UNKNOWN. */
type Abstract = boolean | number | string | typeof NOT_TRUE | typeof UNKNOWN;

function isExpressionArg(arg: ExpressionArg | undefined): arg is ExpressionArg & { exp: Expression } {
  // the compiler's test: anything else in an argument is a literal
  return arg?.dtype === "exp" && arg.exp !== null && typeof arg.exp === "object";
}

/** A literal as the compiler reads it: a num for dtype "num", else the str ("" when absent). */
function literalOf(arg: ExpressionArg): number | string {
  if (arg.dtype === "num") return typeof arg.num === "number" ? arg.num : 0;
  return typeof arg.str === "string" ? arg.str : "";
}

function argsOf(node: Expression): (ExpressionArg | undefined)[] {
  return Array.isArray(node.data) ? node.data : [];
}

function valueOf(arg: ExpressionArg | undefined, eventType: EventType): Abstract {
  if (arg === undefined || arg === null) return UNKNOWN;
  return isExpressionArg(arg) ? expressionValue(arg.exp, eventType) : literalOf(arg);
}

function expressionValue(node: Expression, eventType: EventType): Abstract {
  const args = argsOf(node);
  switch (node.name) {
    case "checkEventType": {
      const type = args[0];
      if (type === undefined || type === null || isExpressionArg(type)) return UNKNOWN;
      const literal = literalOf(type);
      // a number where the event type is expected fails its cast
      return typeof literal === "string" ? literal === eventType : NOT_TRUE;
    }
    case "not": {
      const value = valueOf(args[0], eventType);
      if (typeof value === "boolean") return !value;
      if (typeof value === "number") return value === 0;
      if (typeof value === "string") return false;
      // not(false) is true but not(failure) fails: no single answer
      return UNKNOWN;
    }
    case "and": {
      // false at the first false or 0; a failing argument fails the whole; others are neutral
      let exact = true;
      for (const arg of args) {
        const value = valueOf(arg, eventType);
        if (value === false || value === 0) return exact ? false : NOT_TRUE;
        if (value === NOT_TRUE) return NOT_TRUE;
        if (value === UNKNOWN) exact = false;
      }
      return exact ? true : UNKNOWN;
    }
    case "or": {
      // true at the first true or number > 0; failing arguments are skipped
      let exact = true;
      for (const arg of args) {
        const value = valueOf(arg, eventType);
        if (value === true || (typeof value === "number" && value > 0)) return true;
        if (value === UNKNOWN) exact = false;
      }
      return exact ? false : UNKNOWN;
    }
    default:
      return UNKNOWN;
  }
}

type Holds = "always" | "never" | "maybe";

/** A condition holds only for an expression that evaluates to true, or a literal whose num is not 0. */
function conditionHolds(arg: ExpressionArg | undefined, eventType: EventType): Holds {
  if (arg === undefined || arg === null) return "never";
  if (!isExpressionArg(arg)) return typeof arg.num === "number" && arg.num !== 0 ? "always" : "never";
  const value = expressionValue(arg.exp, eventType);
  if (value === UNKNOWN) return "maybe";
  return value === true ? "always" : "never";
}

/** The action arguments from position `from` on; literals in action positions are ignored, as the compiler does. */
function actionArgs(node: Expression, from: number): Expression[] {
  return argsOf(node)
    .slice(from)
    .flatMap((arg) => (isExpressionArg(arg) ? [arg.exp] : []));
}

function actionAt(node: Expression, index: number): Expression | undefined {
  const arg = argsOf(node)[index];
  return isExpressionArg(arg) ? arg.exp : undefined;
}

function mayAct(node: unknown, eventType: EventType): boolean {
  if (node === null || typeof node !== "object") return true;
  const action = node as Expression;
  switch (action.name) {
    case "IFTHEN": {
      if (conditionHolds(argsOf(action)[0], eventType) === "never") return false;
      return actionArgs(action, 1).some((inner) => mayAct(inner, eventType));
    }
    case "IF": {
      const holds = conditionHolds(argsOf(action)[0], eventType);
      const then = actionAt(action, 1);
      const otherwise = actionAt(action, 2);
      const thenActs = holds !== "never" && then !== undefined && mayAct(then, eventType);
      const elseActs = holds !== "always" && otherwise !== undefined && mayAct(otherwise, eventType);
      return thenActs || elseActs;
    }
    case "DO":
      return actionArgs(action, 0).some((inner) => mayAct(inner, eventType));
    default:
      // any other action writes, reports, counts or calls out: it acts on every event that reaches it
      return true;
  }
}

/**
 * Whether some rule of the set could act on an event of this type: change a participant, write a
 * report, draw a code, call a service, or fail. A rule does not, when it is provably inert for the
 * type: an IFTHEN whose condition can never hold for it (`checkEventType("ENTER")`, or `and(…)`
 * with such a term, `or(…)` of only such terms, `not(checkEventType("TIMER"))`, a literal 0), an
 * IF whose taken branch is inert, a DO of inert actions, or an IFTHEN/DO without actions.
 * Anything else counts as acting: an action at the top level, a condition that depends on the
 * participant (`hasStudyStatus("active")` runs on TIMER as on any other event), an unknown name.
 *
 * So a rule set handles TIMER when it names `checkEventType("TIMER")` in a condition that can hold,
 * or has a rule that is not guarded by an event-type check at all.
 */
export function rulesHandleEvent(rules: readonly unknown[], eventType: EventType): boolean {
  return rules.some((rule) => mayAct(rule, eventType));
}
