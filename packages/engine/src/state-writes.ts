// Writes to the participant state during one rule. The state at the start of a rule is a snapshot
// (the rule may fail and must then leave nothing behind), so the first write of a rule copies the
// state, and the first write to a map or list copies that container. Later writes in the same rule
// change those copies in place: a rule with several actions copies each container at most once.
import type { EvalContext } from "./eval-context";
import { hasOnlyKnownFields, setOwn } from "./participant-state";
import { textProblem } from "./text-values";
import type { AssignedSurvey, ParticipantMessage, ParticipantState } from "./types";

type MapField = "flags" | "linkingCodes" | "lastSubmissions";
type ListField = "assignedSurveys" | "messages";
type ScalarField = "studyStatus" | "currentStudySession";
type MapValue<F extends MapField> = ParticipantState[F][string];
type ListItem<F extends ListField> = F extends "assignedSurveys" ? AssignedSurvey : ParticipantMessage;

const OWNED_BIT: Record<MapField | ListField, number> = {
  flags: 1,
  linkingCodes: 2,
  lastSubmissions: 4,
  assignedSurveys: 8,
  messages: 16,
};

/** Forgets what this rule copied: the next write copies again. Called at each rule start. */
export function releaseState(ctx: EvalContext): void {
  ctx.ownedState = null;
}

/** Installs a state from elsewhere (e.g. an external service's reply). */
export function replaceState(ctx: EvalContext, state: ParticipantState): void {
  ctx.state = state;
  ctx.ownedState = null;
  ctx.plainState = hasOnlyKnownFields(state);
}

/**
 * A shallow copy. A state with only the known fields (ctx.plainState) is copied field by field,
 * which V8 does faster than a spread; a spread keeps fields the engine does not know about
 * (e.g. hashedAccountID).
 */
function copyState(s: ParticipantState, plain: boolean): ParticipantState {
  if (!plain) return { ...s };
  return {
    participantId: s.participantId,
    currentStudySession: s.currentStudySession,
    enteredAt: s.enteredAt,
    modifiedAt: s.modifiedAt,
    studyStatus: s.studyStatus,
    flags: s.flags,
    linkingCodes: s.linkingCodes,
    assignedSurveys: s.assignedSurveys,
    lastSubmissions: s.lastSubmissions,
    messages: s.messages,
  };
}

function ownedState(ctx: EvalContext): ParticipantState {
  if (ctx.ownedState !== ctx.state) {
    ctx.state = copyState(ctx.state, ctx.plainState);
    ctx.ownedState = ctx.state;
    ctx.ownedFields = 0;
  }
  return ctx.state;
}

function ownedMap<F extends MapField>(ctx: EvalContext, field: F): Record<string, MapValue<F>> {
  const state = ownedState(ctx);
  const bit = OWNED_BIT[field];
  if ((ctx.ownedFields & bit) === 0) {
    state[field] = { ...state[field] };
    ctx.ownedFields |= bit;
  }
  return state[field] as Record<string, MapValue<F>>;
}

function ownedList<F extends ListField>(ctx: EvalContext, field: F): Array<ListItem<F>> {
  const state = ownedState(ctx);
  const bit = OWNED_BIT[field];
  if ((ctx.ownedFields & bit) === 0) {
    state[field] = [...state[field]] as ParticipantState[F];
    ctx.ownedFields |= bit;
  }
  return state[field] as Array<ListItem<F>>;
}

/** Fails the action (false, ctx.error set) when text it would write cannot be stored. */
function unstorable(ctx: EvalContext, what: string, text: string): boolean {
  const problem = textProblem(text);
  if (problem === null) return false;
  ctx.error = `${what} ${problem}`;
  return true;
}

export function setScalar<F extends ScalarField>(ctx: EvalContext, field: F, value: ParticipantState[F]): boolean {
  if (ctx.state[field] === value) return true;
  if (unstorable(ctx, field, value)) return false;
  ownedState(ctx)[field] = value;
  return true;
}

export function setEntry<F extends MapField>(ctx: EvalContext, field: F, key: string, value: MapValue<F>): boolean {
  if (unstorable(ctx, `a key of ${field}`, key)) return false;
  if (typeof value === "string" && unstorable(ctx, `${field}.${key}`, value)) return false;
  const map = ctx.state[field] as Record<string, MapValue<F>>;
  if (!Object.hasOwn(map, key) || map[key] !== value) setOwn(ownedMap(ctx, field), key, value);
  return true;
}

/** Rebuilds the map without the key; `delete` would turn it into a slow dictionary object. */
export function deleteEntry<F extends MapField>(ctx: EvalContext, field: F, key: string): true {
  const map = ctx.state[field] as Record<string, MapValue<F>>;
  if (!Object.hasOwn(map, key)) return true;
  const next: Record<string, MapValue<F>> = {};
  for (const k of Object.keys(map)) if (k !== key) setOwn(next, k, map[k] as MapValue<F>);
  replaceContainer(ctx, field, next as ParticipantState[F]);
  return true;
}

/** Installs a container that nobody else holds (a fresh map or list). */
export function replaceContainer<F extends MapField | ListField>(
  ctx: EvalContext,
  field: F,
  fresh: ParticipantState[F],
): true {
  ownedState(ctx)[field] = fresh;
  ctx.ownedFields |= OWNED_BIT[field];
  return true;
}

export function appendItem<F extends ListField>(ctx: EvalContext, field: F, item: ListItem<F>): boolean {
  // items are flat records (a survey, a message): their text fields are checked in place
  for (const key in item) {
    const value = (item as unknown as Record<string, unknown>)[key];
    if (typeof value === "string" && unstorable(ctx, `${field}[].${key}`, value)) return false;
  }
  ownedList(ctx, field).push(item);
  return true;
}

/** Keeps the items that pass; leaves the state alone when all do. */
export function keepItems<F extends ListField>(
  ctx: EvalContext,
  field: F,
  keep: (item: ListItem<F>, index: number) => boolean,
): true {
  const list = ctx.state[field] as Array<ListItem<F>>;
  const kept = list.filter(keep);
  if (kept.length !== list.length) replaceContainer(ctx, field, kept as ParticipantState[F]);
  return true;
}
