// Reads the participant state. Each reader is registered twice: on the current state, and with the
// prefix "incomingState:" on the participant being merged in (event.mergeWithParticipant).
import type { EvalContext } from "../eval-context";
import { fail } from "../eval-context";
import type { ArgSpec, ExpressionEvaluate, ValueType } from "../function-spec";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily, numArg, optional, strArg } from "../function-spec";
import { readEntry } from "../participant-state";
import type { ParticipantField, ParticipantState } from "../types";

const LITERAL_KEY = strArg("surveyKey", "unexpected number or wrong type of argument", { literalOnly: true });

interface Reader {
  name: string;
  summary: string;
  returns: ValueType;
  args?: ArgSpec[];
  reads: readonly ParticipantField[];
  read: (p: ParticipantState, args: unknown[], ctx: EvalContext) => unknown;
}

const readers: Reader[] = [
  {
    name: "getStudyEntryTime",
    summary: "enteredAt",
    returns: "num",
    reads: ["enteredAt"],
    read: (p) => p.enteredAt,
  },
  {
    name: "hasSurveyKeyAssigned",
    summary: 'some assigned survey has the key (the key must be a literal, dtype "str")',
    returns: "bool",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    read: (p, [key]) => p.assignedSurveys.some((s) => s.surveyKey === key),
  },
  {
    name: "getSurveyKeyAssignedFrom",
    summary: "validFrom of the first assignment with the key, -1 if none (literal key)",
    returns: "num",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    read: (p, [key]) => p.assignedSurveys.find((s) => s.surveyKey === key)?.validFrom ?? -1,
  },
  {
    name: "getSurveyKeyAssignedUntil",
    summary: "validUntil of the first assignment with the key, -1 if none (literal key)",
    returns: "num",
    reads: ["assignedSurveys"],
    args: [LITERAL_KEY],
    read: (p, [key]) => p.assignedSurveys.find((s) => s.surveyKey === key)?.validUntil ?? -1,
  },
  {
    name: "hasStudyStatus",
    summary: "studyStatus equals the argument",
    returns: "bool",
    reads: ["studyStatus"],
    args: [strArg("status")],
    read: (p, [status]) => p.studyStatus === status,
  },
  {
    name: "hasParticipantFlag",
    summary: "the flag exists and equals the value",
    returns: "bool",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1"), strArg("value", "could not cast argument 2")],
    read: (p, [key, value]) => readEntry(p.flags, key as string) === value,
  },
  {
    name: "hasParticipantFlagKey",
    summary: "the flag key exists",
    returns: "bool",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1")],
    read: (p, [key]) => Object.hasOwn(p.flags, key as string),
  },
  {
    name: "getParticipantFlagValue",
    summary: 'the flag\'s value, "" if absent',
    returns: "str",
    reads: ["flags"],
    args: [strArg("key", "could not cast argument 1")],
    read: (p, [key]) => readEntry(p.flags, key as string) ?? "",
  },
  {
    name: "hasLinkingCode",
    summary: "the linking code key exists",
    returns: "bool",
    reads: ["linkingCodes"],
    args: [strArg("key", "could not cast argument 1")],
    read: (p, [key]) => Object.hasOwn(p.linkingCodes, key as string),
  },
  {
    name: "getLinkingCodeValue",
    summary: 'the linking code, "" if absent',
    returns: "str",
    reads: ["linkingCodes"],
    args: [strArg("key", "could not cast argument 1")],
    read: (p, [key]) => readEntry(p.linkingCodes, key as string) ?? "",
  },
  {
    name: "getLastSubmissionDate",
    summary: "lastSubmissions[surveyKey] (0 if never); without argument the latest of all (0 if none)",
    returns: "num",
    reads: ["lastSubmissions"],
    args: [optional(strArg("surveyKey"))],
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
    read: (p) => p.currentStudySession,
  },
];

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
