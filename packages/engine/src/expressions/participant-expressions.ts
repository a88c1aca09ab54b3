// Reads the participant state. Each reader is registered twice: on the current state, and with the
// prefix "incomingState:" on the participant being merged in (event.mergeWithParticipant).
import type { EvalContext } from "../eval-context";
import { fail } from "../eval-context";
import type { ArgSpec, ExpressionEvaluate, ExpressionPrefilter, ParticipantForm, ValueType } from "../function-spec";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily, numArg, optional, strArg } from "../function-spec";
import { readEntry } from "../participant-state";
import { columnValue, elementValue, entryValue, exactly } from "../prefilter-forms";
import type { RowPredicate } from "../row-predicate";
import { allOf, anyOf, isSendable, negate } from "../row-predicate";
import type { ParticipantField, ParticipantState } from "../types";

const LITERAL_KEY = strArg("surveyKey", "unexpected number or wrong type of argument", { literalOnly: true });

interface Reader {
  name: string;
  summary: string;
  returns: ValueType;
  args?: ArgSpec[];
  reads: readonly ParticipantField[];
  read: (p: ParticipantState, args: unknown[], ctx: EvalContext) => unknown;
  /**
   * The reader as predicates over stored rows, for argument values of the declared types that are
   * the same for every participant (see prefilter-forms); null, or no `prefilter`, when it cannot
   * be said. The `incomingState:` variant reads the event instead and needs none.
   */
  prefilter?: (args: readonly unknown[]) => ParticipantForm | null;
}

/** Where the key is a string the database can take; the registry's types guarantee the rest. */
const sendable = (key: unknown): key is string => typeof key === "string" && isSendable(key);

/** `lastSubmissionDateOlderThan(ref, key)`: the engine's `last !== undefined && last < ref`. */
function olderThanForKey(ref: number, key: string): ParticipantForm {
  const present: RowPredicate = { kind: "has-key", field: "lastSubmissions", key };
  const entry = (op: "lt" | "gte"): RowPredicate => ({
    kind: "entry",
    field: "lastSubmissions",
    key,
    test: { kind: "compare", type: "number", op, value: ref },
  });
  // a present value that is no number (null, text) compares by JavaScript's coercion: either way
  return {
    kind: "bool",
    whenTrue: allOf(present, negate(entry("gte"))),
    whenFalse: anyOf(negate(present), negate(entry("lt"))),
  };
}

/** `lastSubmissionDateOlderThan(ref)`: true unless some submission is after ref. */
function olderThanForAll(ref: number): ParticipantForm {
  const after: RowPredicate = {
    kind: "some-value",
    field: "lastSubmissions",
    tests: [{ kind: "compare", type: "number", op: "gt", value: ref }],
  };
  // values that are no number may compare either way
  const maybeAfter: RowPredicate = {
    kind: "some-value",
    field: "lastSubmissions",
    tests: [
      { kind: "compare", type: "number", op: "gt", value: ref },
      { kind: "missing" },
      { kind: "other-type", type: "number" },
    ],
  };
  return { kind: "bool", whenTrue: negate(after), whenFalse: maybeAfter };
}

const readers: Reader[] = [
  {
    name: "getStudyEntryTime",
    summary: "enteredAt",
    returns: "num",
    reads: ["enteredAt"],
    prefilter: () => columnValue("enteredAt", "number"),
    read: (p) => p.enteredAt,
  },
  {
    name: "hasSurveyKeyAssigned",
    summary: 'some assigned survey has the key (the key must be a literal, dtype "str")',
    returns: "bool",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    prefilter: ([key]) =>
      sendable(key)
        ? exactly({ kind: "some-element", field: "assignedSurveys", match: { prop: "surveyKey", value: key } })
        : null,
    read: (p, [key]) => p.assignedSurveys.some((s) => s.surveyKey === key),
  },
  {
    name: "getSurveyKeyAssignedFrom",
    summary: "validFrom of the first assignment with the key, -1 if none (literal key)",
    returns: "num",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    prefilter: ([key]) => (sendable(key) ? elementValue("assignedSurveys", "surveyKey", key, "validFrom", -1) : null),
    read: (p, [key]) => p.assignedSurveys.find((s) => s.surveyKey === key)?.validFrom ?? -1,
  },
  {
    name: "getSurveyKeyAssignedUntil",
    summary: "validUntil of the first assignment with the key, -1 if none (literal key)",
    returns: "num",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    prefilter: ([key]) => (sendable(key) ? elementValue("assignedSurveys", "surveyKey", key, "validUntil", -1) : null),
    read: (p, [key]) => p.assignedSurveys.find((s) => s.surveyKey === key)?.validUntil ?? -1,
  },
  {
    name: "hasStudyStatus",
    summary: "studyStatus equals the argument",
    returns: "bool",
    reads: ["studyStatus"],
    args: [strArg("status")],
    prefilter: ([status]) =>
      sendable(status) ? exactly({ kind: "column", field: "studyStatus", op: "eq", value: status }) : null,
    read: (p, [status]) => p.studyStatus === status,
  },
  {
    name: "hasParticipantFlag",
    summary: "the flag exists and equals the value",
    returns: "bool",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1"), strArg("value", "could not cast argument 2")],
    prefilter: ([key, value]) =>
      sendable(key) && sendable(value)
        ? exactly({ kind: "entry", field: "flags", key, test: { kind: "compare", type: "string", op: "eq", value } })
        : null,
    read: (p, [key, value]) => readEntry(p.flags, key as string) === value,
  },
  {
    name: "hasParticipantFlagKey",
    summary: "the flag key exists",
    returns: "bool",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1")],
    prefilter: ([key]) => (sendable(key) ? exactly({ kind: "has-key", field: "flags", key }) : null),
    read: (p, [key]) => Object.hasOwn(p.flags, key as string),
  },
  {
    name: "getParticipantFlagValue",
    summary: 'the flag\'s value, "" if absent',
    returns: "str",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1")],
    prefilter: ([key]) => (sendable(key) ? entryValue("flags", key, "") : null),
    read: (p, [key]) => readEntry(p.flags, key as string) ?? "",
  },
  {
    name: "hasLinkingCode",
    summary: "the linking code key exists",
    returns: "bool",
    reads: ["linkingCodes"],
    args: [strArg("key", "could not cast argument 1")],
    prefilter: ([key]) => (sendable(key) ? exactly({ kind: "has-key", field: "linkingCodes", key }) : null),
    read: (p, [key]) => Object.hasOwn(p.linkingCodes, key as string),
  },
  {
    name: "getLinkingCodeValue",
    summary: 'the linking code, "" if absent',
    returns: "str",
    reads: ["linkingCodes"],
    args: [strArg("key", "could not cast argument 1")],
    prefilter: ([key]) => (sendable(key) ? entryValue("linkingCodes", key, "") : null),
    read: (p, [key]) => readEntry(p.linkingCodes, key as string) ?? "",
  },
  {
    name: "getLastSubmissionDate",
    summary: "lastSubmissions[surveyKey] (0 if never); without argument the latest of all (0 if none)",
    returns: "num",
    reads: ["lastSubmissions"],
    args: [optional(strArg("surveyKey"))],
    // the latest of all submissions is not translated
    prefilter: (args) => (args.length === 1 && sendable(args[0]) ? entryValue("lastSubmissions", args[0], 0) : null),
    read: (p, args) => {
      if (args.length === 0) {
        let latest = 0;
        const submissions = p.lastSubmissions;
        for (const key in submissions) {
          const ts = submissions[key] as number;
          if (Object.hasOwn(submissions, key) && ts > latest) latest = ts;
        }
        return latest;
      }
      return readEntry(p.lastSubmissions, args[0] as string) ?? 0;
    },
  },
  {
    name: "lastSubmissionDateOlderThan",
    summary: "with a key: submitted and last < refTime; without: no submission is after refTime",
    returns: "bool",
    reads: ["lastSubmissions"],
    args: [numArg("refTime", "could not cast argument 1"), optional(strArg("surveyKey"))],
    prefilter: (args) => {
      const ref = Math.trunc(args[0] as number);
      if (!isSendable(ref)) return null;
      if (args.length === 1) return olderThanForAll(ref);
      return sendable(args[1]) ? olderThanForKey(ref, args[1]) : null;
    },
    read: (p, args) => {
      const ref = Math.trunc(args[0] as number);
      if (args.length === 2) {
        const last = readEntry(p.lastSubmissions, args[1] as string);
        return last !== undefined && last < ref;
      }
      const submissions = p.lastSubmissions;
      for (const key in submissions)
        if (Object.hasOwn(submissions, key) && (submissions[key] as number) > ref) return false;
      return true;
    },
  },
  {
    name: "hasMessageTypeAssigned",
    summary: "some scheduled message has the type",
    returns: "bool",
    reads: ["messages"],
    args: [anyArg("messageType")],
    prefilter: ([type]) =>
      isSendable(type)
        ? exactly({ kind: "some-element", field: "messages", match: { prop: "type", value: type } })
        : null,
    read: (p, [type]) => p.messages.some((m) => m.type === type),
  },
  {
    name: "getMessageNextTime",
    summary: 'earliest scheduledFor of the type (a plain number); error "no message for this type found"',
    returns: "num",
    reads: ["messages"],
    args: [strArg("messageType")],
    read: (p, [type], ctx) => {
      let next = 0;
      for (const m of p.messages) {
        // a zero time counts as "none yet", as in the reference
        if (m.type === type && (next === 0 || next > m.scheduledFor)) next = m.scheduledFor;
      }
      return next === 0 ? fail(ctx, "no message for this type found") : next;
    },
  },
  {
    name: "getCurrentStudySession",
    summary: "currentStudySession",
    returns: "str",
    reads: ["currentStudySession"],
    prefilter: () => columnValue("currentStudySession", "string"),
    read: (p) => p.currentStudySession,
  },
];

function prefilterOf(reader: Reader, incoming: boolean): ExpressionPrefilter | undefined {
  // the merge partner comes with the event, the same for every participant of a batch
  if (incoming) return { kind: "batch-constant" };
  const form = reader.prefilter;
  return form ? { kind: "participant", form } : undefined;
}

const optionalPrefilter = (prefilter: ExpressionPrefilter | undefined) => (prefilter ? { prefilter } : {});

function variant(reader: Reader, incoming: boolean) {
  const evaluate: ExpressionEvaluate = incoming
    ? (ctx, args) => reader.read(ctx.incoming, args, ctx)
    : (ctx, args) => reader.read(ctx.state, args, ctx);
  return {
    name: incoming ? `incomingState:${reader.name}` : reader.name,
    summary: incoming ? `${reader.name} of the participant being merged in` : reader.summary,
    returns: reader.returns,
    // the merge partner comes with the event: nothing of the participant is read
    participantFields: incoming ? NO_PARTICIPANT_FIELDS : { reads: reader.reads, writes: [] },
    args: reader.args ?? [],
    evaluate,
    ...optionalPrefilter(prefilterOf(reader, incoming)),
  };
}

export const participantExpressions = expressionFamily(
  "participant",
  readers.map((r) => variant(r, false)),
);

export const incomingStateExpressions = expressionFamily(
  "incoming state",
  readers.map((r) => variant(r, true)),
);
