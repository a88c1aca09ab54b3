import type { AssignedSurvey, ParticipantField, ParticipantMessage, ParticipantState } from "./types";

const hasOwn = Object.hasOwn;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Sets an own property. A plain assignment with the key "__proto__" would change the object's
 * prototype instead of storing the entry, and keys come from rules and requests.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

export function readEntry<T>(map: Record<string, T>, key: string): T | undefined {
  return hasOwn(map, key) ? map[key] : undefined;
}

function stringMap(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(input)) return out;
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === "string") setOwn(out, k, v);
    else if (typeof v === "number" || typeof v === "boolean") setOwn(out, k, String(v));
  }
  return out;
}

function numberMap(input: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRecord(input)) return out;
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === "number" && Number.isFinite(v)) setOwn(out, k, v);
  }
  return out;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

function assignedSurvey(input: Record<string, unknown>): AssignedSurvey {
  const out: AssignedSurvey = {
    surveyKey: str(input["surveyKey"]),
    validFrom: num(input["validFrom"]),
    validUntil: num(input["validUntil"]),
    category: str(input["category"]),
  };
  if (typeof input["studyKey"] === "string") out.studyKey = input["studyKey"];
  if (typeof input["profileID"] === "string") out.profileID = input["profileID"];
  return out;
}

function message(input: Record<string, unknown>): ParticipantMessage {
  return { id: str(input["id"]), type: str(input["type"]), scheduledFor: num(input["scheduledFor"]) };
}

/**
 * A complete participant state from a partial one (e.g. a database row with null columns):
 * missing maps and lists become empty, entries of the wrong type are dropped, flags and linking
 * codes that are numbers or booleans become strings. A missing studyStatus becomes "active", the
 * status a participant gets when it enters a study.
 */
export function normalizeParticipantState(
  input: Partial<ParticipantState> & { participantId: string },
): ParticipantState {
  const source: Record<string, unknown> = isRecord(input) ? input : {};
  const surveys = Array.isArray(source["assignedSurveys"]) ? (source["assignedSurveys"] as unknown[]) : [];
  const messages = Array.isArray(source["messages"]) ? (source["messages"] as unknown[]) : [];
  return {
    participantId: str(source["participantId"]),
    currentStudySession: str(source["currentStudySession"]),
    enteredAt: num(source["enteredAt"]),
    modifiedAt: num(source["modifiedAt"]),
    studyStatus: typeof source["studyStatus"] === "string" ? source["studyStatus"] : "active",
    flags: stringMap(source["flags"]),
    linkingCodes: stringMap(source["linkingCodes"]),
    assignedSurveys: surveys.filter(isRecord).map(assignedSurvey),
    lastSubmissions: numberMap(source["lastSubmissions"]),
    messages: messages.filter(isRecord).map(message),
  };
}

/**
 * The state the engine works on. A well-formed input is used as it is (it is never mutated);
 * anything else is normalized first, so rules can rely on the containers being there.
 */
export function workingState(input: unknown): ParticipantState {
  if (isWellFormed(input)) return input;
  const source = isRecord(input) ? input : {};
  return normalizeParticipantState({ ...source, participantId: str(source["participantId"]) });
}

const isObject = (v: unknown): boolean => typeof v === "object" && v !== null;

function allObjects(list: unknown[]): boolean {
  for (let i = 0; i < list.length; i++) if (!isObject(list[i])) return false;
  return true;
}

/** Runs once per participant and event, so it checks types without allocating. */
function isWellFormed(input: unknown): input is ParticipantState {
  if (!isObject(input)) return false;
  const s = input as Record<string, unknown>;
  const surveys = s["assignedSurveys"];
  const messages = s["messages"];
  return (
    typeof s["participantId"] === "string" &&
    typeof s["currentStudySession"] === "string" &&
    typeof s["enteredAt"] === "number" &&
    typeof s["modifiedAt"] === "number" &&
    typeof s["studyStatus"] === "string" &&
    isObject(s["flags"]) &&
    isObject(s["linkingCodes"]) &&
    isObject(s["lastSubmissions"]) &&
    Array.isArray(surveys) &&
    Array.isArray(messages) &&
    allObjects(surveys) &&
    allObjects(messages)
  );
}

const FIELD_CHECKS: ReadonlyArray<readonly [string, (v: unknown) => boolean]> = [
  ["participantId", (v) => typeof v === "string"],
  ["currentStudySession", (v) => typeof v === "string"],
  ["enteredAt", (v) => typeof v === "number" && Number.isFinite(v)],
  ["modifiedAt", (v) => typeof v === "number" && Number.isFinite(v)],
  ["studyStatus", (v) => typeof v === "string"],
  ["flags", (v) => isRecord(v) && Object.values(v).every((x) => typeof x === "string")],
  ["linkingCodes", (v) => isRecord(v) && Object.values(v).every((x) => typeof x === "string")],
  ["lastSubmissions", (v) => isRecord(v) && Object.values(v).every((x) => typeof x === "number" && Number.isFinite(x))],
  [
    "assignedSurveys",
    (v) =>
      Array.isArray(v) &&
      v.every(
        (s) =>
          isRecord(s) &&
          typeof s["surveyKey"] === "string" &&
          (s["validFrom"] === undefined || typeof s["validFrom"] === "number") &&
          (s["validUntil"] === undefined || typeof s["validUntil"] === "number") &&
          (s["category"] === undefined || typeof s["category"] === "string"),
      ),
  ],
  [
    "messages",
    (v) =>
      Array.isArray(v) &&
      v.every((m) => isRecord(m) && typeof m["type"] === "string" && typeof m["scheduledFor"] === "number"),
  ],
];

/**
 * Why `value` is not a participant state, or null if it is one. Missing fields are allowed (they
 * take their defaults); present fields must have the right types; null containers count as empty.
 */
export function participantStateProblem(value: unknown): string | null {
  if (!isRecord(value)) return "not an object";
  for (const [field, check] of FIELD_CHECKS) {
    const v = value[field];
    if (v === undefined || (v === null && field !== "participantId" && field !== "studyStatus")) continue;
    if (!check(v)) return `field ${field} has the wrong type`;
  }
  return null;
}

/** True when the state has no fields beyond the ten known ones (a working state has all ten). */
export function hasOnlyKnownFields(state: ParticipantState): boolean {
  let count = 0;
  for (const key in state) if (hasOwn(state, key)) count++;
  return count === KNOWN_FIELDS.size;
}

/** What the `incomingState:` expressions read outside a MERGE event. */
export const EMPTY_PARTICIPANT: ParticipantState = Object.freeze({
  participantId: "",
  currentStudySession: "",
  enteredAt: 0,
  modifiedAt: 0,
  studyStatus: "",
  flags: Object.freeze({}) as Record<string, string>,
  linkingCodes: Object.freeze({}) as Record<string, string>,
  assignedSurveys: Object.freeze([]) as unknown as AssignedSurvey[],
  lastSubmissions: Object.freeze({}) as Record<string, number>,
  messages: Object.freeze([]) as unknown as ParticipantMessage[],
});

// ---- semantic equality --------------------------------------------------------------------------

// a Record, so that a field added to ParticipantState and missing here fails to compile
const FIELD_RECORD: Record<ParticipantField, true> = {
  participantId: true,
  currentStudySession: true,
  enteredAt: true,
  modifiedAt: true,
  studyStatus: true,
  flags: true,
  linkingCodes: true,
  assignedSurveys: true,
  lastSubmissions: true,
  messages: true,
};

/** Every field of ParticipantState, in declaration order. */
export const PARTICIPANT_FIELDS: readonly ParticipantField[] = Object.freeze(
  Object.keys(FIELD_RECORD) as ParticipantField[],
);

const KNOWN_FIELDS: ReadonlySet<string> = new Set(PARTICIPANT_FIELDS);

function ownKeyCount(record: Record<string, unknown>): number {
  let count = 0;
  for (const key in record) if (hasOwn(record, key)) count++;
  return count;
}

function mapsEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ra = isRecord(a) ? a : {};
  const rb = isRecord(b) ? b : {};
  let count = 0;
  for (const k in ra) {
    if (!hasOwn(ra, k)) continue;
    count++;
    if (!hasOwn(rb, k) || !jsonEqual(ra[k], rb[k])) return false;
  }
  return count === ownKeyCount(rb);
}

function listsEqual(a: unknown, b: unknown, itemEqual: (x: unknown, y: unknown) => boolean): boolean {
  if (a === b) return true;
  const la = Array.isArray(a) ? (a as unknown[]) : [];
  const lb = Array.isArray(b) ? (b as unknown[]) : [];
  if (la.length !== lb.length) return false;
  for (let i = 0; i < la.length; i++) {
    if (!itemEqual(la[i], lb[i])) return false;
  }
  return true;
}

/** Optional string fields of stored surveys read as "" when absent, like the reference's zero values. */
function surveysEqual(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (!isRecord(x) || !isRecord(y)) return jsonEqual(x, y);
  return (
    x["surveyKey"] === y["surveyKey"] &&
    x["validFrom"] === y["validFrom"] &&
    x["validUntil"] === y["validUntil"] &&
    x["category"] === y["category"] &&
    (x["studyKey"] ?? "") === (y["studyKey"] ?? "") &&
    (x["profileID"] ?? "") === (y["profileID"] ?? "")
  );
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) {
    // absent, null and empty containers are the same thing for stored participant data
    return isEmptyContainer(a) && isEmptyContainer(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) return listsEqual(a, b, jsonEqual);
  if (isRecord(a) && isRecord(b)) return mapsEqual(a, b);
  return false;
}

function isEmptyContainer(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isRecord(v) && ownKeyCount(v) === 0;
}

/**
 * Semantic equality of two participant states: an absent or null map or list equals an empty one,
 * key order is irrelevant. Fields beyond the known ones (e.g. hashedAccountID) are compared too.
 */
export function statesEqual(a: ParticipantState, b: ParticipantState): boolean {
  if (a === b) return true;
  const ra: Record<string, unknown> = isRecord(a) ? a : {};
  const rb: Record<string, unknown> = isRecord(b) ? b : {};
  if (!knownFieldsEqual(ra, rb)) return false;
  for (const k in ra) {
    if (hasOwn(ra, k) && !KNOWN_FIELDS.has(k) && !jsonEqual(ra[k], rb[k])) return false;
  }
  for (const k in rb) {
    if (hasOwn(rb, k) && !KNOWN_FIELDS.has(k) && !hasOwn(ra, k) && !isEmptyContainer(rb[k])) return false;
  }
  return true;
}

/** statesEqual for two states known to have no fields beyond the known ones. */
export function plainStatesEqual(a: ParticipantState, b: ParticipantState): boolean {
  return a === b || knownFieldsEqual(a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>);
}

function knownFieldsEqual(ra: Record<string, unknown>, rb: Record<string, unknown>): boolean {
  if (
    ra["participantId"] !== rb["participantId"] ||
    ra["currentStudySession"] !== rb["currentStudySession"] ||
    ra["enteredAt"] !== rb["enteredAt"] ||
    ra["modifiedAt"] !== rb["modifiedAt"] ||
    ra["studyStatus"] !== rb["studyStatus"]
  ) {
    return false;
  }
  if (!mapsEqual(ra["flags"], rb["flags"])) return false;
  if (!mapsEqual(ra["linkingCodes"], rb["linkingCodes"])) return false;
  if (!mapsEqual(ra["lastSubmissions"], rb["lastSubmissions"])) return false;
  if (!listsEqual(ra["assignedSurveys"], rb["assignedSurveys"], surveysEqual)) return false;
  return listsEqual(ra["messages"], rb["messages"], jsonEqual);
}
