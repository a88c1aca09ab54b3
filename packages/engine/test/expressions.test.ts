// Every expression, table-driven: at least one case that succeeds and one that fails.
import { describe, expect, it } from "vitest";
import type { EngineServices, Expression, ParticipantState, StudyEvent, SurveyResponse } from "../src/index";
import { evaluateExpression, expressionNames } from "../src/index";
import type { InMemorySeed } from "../src/index";
import { NOW, call, environment, event, exp, failingServices, num, participant, str } from "./builders";

interface Case {
  title: string;
  expr: Expression;
  state?: Partial<ParticipantState>;
  event?: Partial<StudyEvent>;
  seed?: InMemorySeed;
  services?: EngineServices;
  /** Expected value (also checked on failure: the typed zero or the function's failure value). */
  value?: unknown;
  /** Expected error (substring or pattern); absent means the evaluation must succeed. */
  error?: string | RegExp;
  /** EngineEnv.timeZone (absent: UTC). */
  timeZone?: string;
}

const response: SurveyResponse = {
  key: "weekly",
  arrivedAt: NOW - 10,
  responses: [
    {
      key: "weekly.Q1",
      response: {
        key: "rg",
        items: [
          { key: "mcg", items: [{ key: "a" }, { key: "b" }] },
          { key: "num", value: "42.5" },
          { key: "txt", value: "hello" },
          { key: "bad", value: "4x" },
          { key: "empty", items: [] },
        ],
      },
    },
    { key: "weekly.Q2", response: { key: "rg", items: [{ key: "deep", items: [{ key: "er", value: "x" }] }] } },
  ],
};
const submit = { type: "SUBMIT" as const, response };
/** A sub-expression that always fails at run time with "item not found". */
const failing = exp("getResponseValueAsStr", str("missing"), str("rg"));

const people: Partial<ParticipantState> = {
  studyStatus: "active",
  currentStudySession: "sess-1",
  enteredAt: 1000,
  flags: { group: "A" },
  linkingCodes: { code: "X1" },
  assignedSurveys: [
    { surveyKey: "s1", validFrom: 10, validUntil: 20, category: "prio" },
    { surveyKey: "s1", validFrom: 30, validUntil: 40, category: "normal" },
    { surveyKey: "s2", validFrom: 0, validUntil: 0, category: "normal" },
  ],
  lastSubmissions: { s1: 100, s2: 200 },
  messages: [
    { id: "m1", type: "reminder", scheduledFor: 500 },
    { id: "m2", type: "reminder", scheduledFor: 300 },
    { id: "m3", type: "other", scheduledFor: 0 },
  ],
};

const oldResponse = (arrivedAt: number, answer: string): SurveyResponse & { participantId: string } => ({
  key: "weekly",
  participantId: "p1",
  arrivedAt,
  responses: [{ key: "weekly.Q1", response: { key: "rg", items: [{ key: "txt", value: answer }] } }],
});
const history: InMemorySeed = {
  oldResponses: [
    oldResponse(NOW - 300, "yes"),
    oldResponse(NOW - 200, "no"),
    oldResponse(NOW - 100, "yes"),
    { ...oldResponse(NOW - 50, "yes"), participantId: "p2" },
  ],
};
const answeredYes = exp("hasResponseKeyWithValue", str("weekly.Q1"), str("rg.txt"), str("yes"));
const variables: InMemorySeed = {
  variables: [
    { key: "open", type: "boolean", value: true },
    { key: "limit", type: "int", value: 12 },
    { key: "ratio", type: "float", value: 0.25 },
    { key: "label", type: "string", value: "wave 2" },
    { key: "start", type: "date", value: NOW - 3600 },
    { key: "isoStart", type: "date", value: "2024-01-01T00:00:00Z" },
  ],
};
const external = (reply: unknown): InMemorySeed => ({ externalServices: { svc: () => reply } });

const eventCases: Case[] = [
  { title: "checkEventType matches", expr: call("checkEventType", str("CUSTOM")), value: true },
  { title: "checkEventType differs", expr: call("checkEventType", str("SUBMIT")), value: false },
  {
    title: "checkEventType argument fails",
    expr: call("checkEventType", failing),
    value: false,
    error: "item not found",
  },
  { title: "checkEventKey matches", expr: call("checkEventKey", str("k1")), event: { eventKey: "k1" }, value: true },
  { title: "checkEventKey without key", expr: call("checkEventKey", str("k1")), value: false },
  { title: "checkEventKey argument fails", expr: call("checkEventKey", failing), error: "item not found" },
  {
    title: "checkSurveyResponseKey matches",
    expr: call("checkSurveyResponseKey", str("weekly")),
    event: submit,
    value: true,
  },
  {
    title: "checkSurveyResponseKey without response",
    expr: call("checkSurveyResponseKey", str("weekly")),
    value: false,
  },
  {
    title: "checkSurveyResponseKey number literal",
    expr: call("checkSurveyResponseKey", num(1)),
    error: "surveyKey must be a string, got a number",
  },
  { title: "hasEventPayload with keys", expr: call("hasEventPayload"), event: { payload: { a: 1 } }, value: true },
  { title: "hasEventPayload empty", expr: call("hasEventPayload"), event: { payload: {} }, value: false },
  {
    title: "hasEventPayload exp without expression",
    expr: { name: "hasEventPayload", data: [{ dtype: "exp" }] },
    error: "expression.data[0].exp: is missing",
  },
  {
    title: "getEventPayloadValueAsStr string",
    expr: call("getEventPayloadValueAsStr", str("a")),
    event: { payload: { a: "x" } },
    value: "x",
  },
  {
    title: "getEventPayloadValueAsStr number reads as empty",
    expr: call("getEventPayloadValueAsStr", str("a")),
    event: { payload: { a: 3 } },
    value: "",
  },
  {
    title: "getEventPayloadValueAsStr argument fails",
    expr: call("getEventPayloadValueAsStr", failing),
    value: "",
    error: "item not found",
  },
  {
    title: "getEventPayloadValueAsNum number",
    expr: call("getEventPayloadValueAsNum", str("a")),
    event: { payload: { a: 3.5 } },
    value: 3.5,
  },
  {
    title: "getEventPayloadValueAsNum string reads as 0",
    expr: call("getEventPayloadValueAsNum", str("a")),
    event: { payload: { a: "3" } },
    value: 0,
  },
  {
    title: "getEventPayloadValueAsNum number key",
    expr: call("getEventPayloadValueAsNum", num(1)),
    error: "key must be a string",
  },
  {
    title: "hasEventPayloadKey present",
    expr: call("hasEventPayloadKey", str("a")),
    event: { payload: { a: null } },
    value: true,
  },
  {
    title: "hasEventPayloadKey not inherited",
    expr: call("hasEventPayloadKey", str("toString")),
    event: { payload: {} },
    value: false,
  },
  { title: "hasEventPayloadKey argument fails", expr: call("hasEventPayloadKey", failing), error: "item not found" },
  {
    title: "hasEventPayloadKeyWithValue string equal",
    expr: call("hasEventPayloadKeyWithValue", str("a"), str("1")),
    event: { payload: { a: "1" } },
    value: true,
  },
  {
    title: "hasEventPayloadKeyWithValue number never equal",
    expr: call("hasEventPayloadKeyWithValue", str("a"), str("1")),
    event: { payload: { a: 1 } },
    value: false,
  },
  {
    title: "hasEventPayloadKeyWithValue arity",
    expr: call("hasEventPayloadKeyWithValue", str("a")),
    error: "takes exactly 2 arguments, got 1",
  },
];

const responseCases: Case[] = [
  {
    title: "responseHasKeysAny finds one",
    expr: call("responseHasKeysAny", str("weekly.Q1"), str("rg.mcg"), str("x"), str("b")),
    event: submit,
    value: true,
  },
  {
    title: "responseHasKeysAny finds none",
    expr: call("responseHasKeysAny", str("weekly.Q1"), str("rg.mcg"), str("x")),
    event: submit,
    value: false,
  },
  {
    title: "responseHasKeysAny missing item is false",
    expr: call("responseHasKeysAny", str("nope"), str("rg"), str("a")),
    event: submit,
    value: false,
  },
  {
    title: "responseHasKeysAny arity",
    expr: call("responseHasKeysAny", str("weekly.Q1"), str("rg")),
    error: "takes at least 3 arguments, got 2",
  },
  {
    title: "responseHasOnlyKeysOtherThan none listed",
    expr: call("responseHasOnlyKeysOtherThan", str("weekly.Q1"), str("rg.mcg"), str("x"), str("y")),
    event: submit,
    value: true,
  },
  {
    title: "responseHasOnlyKeysOtherThan checks every key",
    expr: call("responseHasOnlyKeysOtherThan", str("weekly.Q1"), str("rg.mcg"), str("x"), str("b")),
    event: submit,
    value: false,
  },
  {
    title: "responseHasOnlyKeysOtherThan empty node",
    expr: call("responseHasOnlyKeysOtherThan", str("weekly.Q1"), str("rg.empty"), str("x")),
    event: submit,
    value: false,
  },
  {
    title: "responseHasOnlyKeysOtherThan argument fails",
    expr: call("responseHasOnlyKeysOtherThan", str("weekly.Q1"), str("rg"), failing),
    event: submit,
    error: "item not found",
  },
  {
    title: "getResponseValueAsNum parses",
    expr: call("getResponseValueAsNum", str("weekly.Q1"), str("rg.num")),
    event: submit,
    value: 42.5,
  },
  {
    title: "getResponseValueAsNum nested group",
    expr: call("getResponseValueAsStr", str("weekly.Q2"), str("rg.deep.er")),
    event: submit,
    value: "x",
  },
  {
    title: "getResponseValueAsNum unparsable",
    expr: call("getResponseValueAsNum", str("weekly.Q1"), str("rg.bad")),
    event: submit,
    value: 0,
    error: 'strconv.ParseFloat: parsing "4x": invalid syntax',
  },
  {
    title: "getResponseValueAsNum missing",
    expr: call("getResponseValueAsNum", str("weekly.Q1"), str("rg.none")),
    event: submit,
    error: "item not found",
  },
  {
    title: "getResponseValueAsStr value",
    expr: call("getResponseValueAsStr", str("weekly.Q1"), str("rg.txt")),
    event: submit,
    value: "hello",
  },
  {
    title: "getResponseValueAsStr wrong root key",
    expr: call("getResponseValueAsStr", str("weekly.Q1"), str("xx.txt")),
    event: submit,
    value: "",
    error: "item not found",
  },
  {
    title: "getSelectedKeys joins",
    expr: call("getSelectedKeys", str("weekly.Q1"), str("rg.mcg")),
    event: submit,
    value: "a;b",
  },
  {
    title: "getSelectedKeys missing",
    expr: call("getSelectedKeys", str("weekly.Q9"), str("rg")),
    event: submit,
    error: "item not found",
  },
  {
    title: "countResponseItems counts",
    expr: call("countResponseItems", str("weekly.Q1"), str("rg.mcg")),
    event: submit,
    value: 2,
  },
  {
    title: "countResponseItems missing is -1",
    expr: call("countResponseItems", str("weekly.Q1"), str("rg.none")),
    event: submit,
    value: -1,
    error: "item not found",
  },
  {
    title: "hasResponseKey present",
    expr: call("hasResponseKey", str("weekly.Q1"), str("rg.mcg.a")),
    event: submit,
    value: true,
  },
  {
    title: "hasResponseKey absent",
    expr: call("hasResponseKey", str("weekly.Q1"), str("rg.mcg.z")),
    event: submit,
    value: false,
  },
  {
    title: "hasResponseKey argument fails",
    expr: call("hasResponseKey", failing, str("rg")),
    event: submit,
    error: "item not found",
  },
  {
    title: "hasResponseKeyWithValue equal",
    expr: call("hasResponseKeyWithValue", str("weekly.Q1"), str("rg.txt"), str("hello")),
    event: submit,
    value: true,
  },
  {
    title: "hasResponseKeyWithValue different",
    expr: call("hasResponseKeyWithValue", str("weekly.Q1"), str("rg.txt"), str("bye")),
    event: submit,
    value: false,
  },
  {
    title: "hasResponseKeyWithValue number literal",
    expr: call("hasResponseKeyWithValue", str("weekly.Q1"), str("rg.txt"), num(1)),
    error: "value must be a string",
  },
];

const oldResponseCases: Case[] = [
  {
    title: "checkConditionForOldResponses all (default) with a no",
    expr: call("checkConditionForOldResponses", answeredYes),
    seed: history,
    value: false,
  },
  {
    title: "checkConditionForOldResponses all since the no",
    expr: call("checkConditionForOldResponses", answeredYes, str("all"), str("weekly"), num(NOW - 150)),
    seed: history,
    value: true,
  },
  {
    title: "checkConditionForOldResponses all without responses",
    expr: call("checkConditionForOldResponses", answeredYes, str("all"), str("other")),
    seed: history,
    value: false,
  },
  {
    title: "checkConditionForOldResponses any",
    expr: call("checkConditionForOldResponses", answeredYes, str("any")),
    seed: history,
    value: true,
  },
  {
    title: "checkConditionForOldResponses count 2",
    expr: call("checkConditionForOldResponses", answeredYes, num(2)),
    seed: history,
    value: true,
  },
  {
    title: "checkConditionForOldResponses count 3 (other participant not counted)",
    expr: call("checkConditionForOldResponses", answeredYes, num(3)),
    seed: history,
    value: false,
  },
  {
    title: 'checkConditionForOldResponses mode "count" means one',
    expr: call("checkConditionForOldResponses", answeredYes, str("count")),
    seed: history,
    value: true,
  },
  {
    title: "checkConditionForOldResponses unknown mode never matches",
    expr: call("checkConditionForOldResponses", answeredYes, str("most")),
    seed: history,
    value: false,
  },
  {
    title: "checkConditionForOldResponses since and until together",
    expr: call("checkConditionForOldResponses", answeredYes, str("all"), str(""), num(NOW - 250), num(NOW - 150)),
    seed: history,
    value: false,
  },
  {
    title: "checkConditionForOldResponses non-boolean condition counts as false",
    expr: call(
      "checkConditionForOldResponses",
      exp("getResponseValueAsStr", str("weekly.Q1"), str("rg.txt")),
      str("any"),
    ),
    seed: history,
    value: false,
  },
  {
    title: "checkConditionForOldResponses condition fails",
    expr: call("checkConditionForOldResponses", exp("getResponseValueAsNum", str("weekly.Q1"), str("rg.txt"))),
    seed: history,
    value: false,
    error: 'strconv.ParseFloat: parsing "yes": invalid syntax',
  },
  {
    title: "checkConditionForOldResponses mode of the wrong type",
    expr: call("checkConditionForOldResponses", answeredYes, exp("checkEventType", str("X"))),
    seed: history,
    error: "type unknown bool",
  },
  {
    title: "checkConditionForOldResponses needs the study key",
    expr: call("checkConditionForOldResponses", answeredYes),
    event: { studyKey: "" },
    error: "study key missing",
  },
  {
    title: "checkConditionForOldResponses literal condition",
    expr: call("checkConditionForOldResponses", num(1)),
    error: 'condition must be an expression (dtype "exp")',
  },
  {
    title: "checkConditionForOldResponses port fails",
    expr: call("checkConditionForOldResponses", answeredYes),
    services: failingServices("findOldResponses"),
    error: "checkConditionForOldResponses: findOldResponses failed",
  },
];

const studyDataCases: Case[] = [
  {
    title: "isStudyCodePresent yes",
    expr: call("isStudyCodePresent", str("list"), str("A1")),
    seed: { codeLists: { list: ["A1"] } },
    value: true,
  },
  {
    title: "isStudyCodePresent port failure is false",
    expr: call("isStudyCodePresent", str("list"), str("A1")),
    services: failingServices("isCodePresent"),
    value: false,
  },
  {
    title: "isStudyCodePresent argument fails",
    expr: call("isStudyCodePresent", str("list"), failing),
    error: "item not found",
  },
  {
    title: "getCurrentStudyCounterValue",
    expr: call("getCurrentStudyCounterValue", str("c")),
    seed: { counters: { c: 5 } },
    value: 5,
  },
  { title: "getCurrentStudyCounterValue missing is 0", expr: call("getCurrentStudyCounterValue", str("c")), value: 0 },
  {
    title: "getCurrentStudyCounterValue port fails",
    expr: call("getCurrentStudyCounterValue", str("c")),
    services: failingServices("getCounterValue"),
    value: 0,
    error: "getCurrentStudyCounterValue: getCounterValue failed",
  },
  {
    title: "getNextStudyCounterValue increments",
    expr: call("getNextStudyCounterValue", str("c")),
    seed: { counters: { c: 5 } },
    value: 6,
  },
  {
    title: "getNextStudyCounterValue port fails",
    expr: call("getNextStudyCounterValue", str("c")),
    services: failingServices("incrementCounter"),
    error: "incrementCounter failed",
  },
  {
    title: "getStudyVariableBoolean",
    expr: call("getStudyVariableBoolean", str("open")),
    seed: variables,
    value: true,
  },
  {
    title: "getStudyVariableBoolean wrong type",
    expr: call("getStudyVariableBoolean", str("limit")),
    seed: variables,
    value: false,
    error: "getStudyVariable: wrong type, expected boolean, got int",
  },
  { title: "getStudyVariableInt", expr: call("getStudyVariableInt", str("limit")), seed: variables, value: 12 },
  {
    title: "getStudyVariableInt missing",
    expr: call("getStudyVariableInt", str("nope")),
    seed: variables,
    error: 'getStudyVariable: variable "nope" not found',
  },
  { title: "getStudyVariableFloat", expr: call("getStudyVariableFloat", str("ratio")), seed: variables, value: 0.25 },
  {
    title: "getStudyVariableFloat wrong type",
    expr: call("getStudyVariableFloat", str("limit")),
    seed: variables,
    error: "expected float, got int",
  },
  {
    title: "getStudyVariableString",
    expr: call("getStudyVariableString", str("label")),
    seed: variables,
    value: "wave 2",
  },
  {
    title: "getStudyVariableString number key",
    expr: call("getStudyVariableString", num(3)),
    error: "key must be a string",
  },
  {
    title: "getStudyVariableDate seconds",
    expr: call("getStudyVariableDate", str("start")),
    seed: variables,
    value: NOW - 3600,
  },
  {
    title: "getStudyVariableDate ISO text",
    expr: call("getStudyVariableDate", str("isoStart")),
    seed: variables,
    value: NOW,
  },
  {
    title: "getStudyVariableDate wrong type",
    expr: call("getStudyVariableDate", str("label")),
    seed: variables,
    error: "expected date, got string",
  },
];

/** Participant readers; each case also runs as its incomingState: twin against the merged-in participant. */
const participantCases: Case[] = [
  { title: "getStudyEntryTime", expr: call("getStudyEntryTime"), state: people, value: 1000 },
  {
    title: "getStudyEntryTime takes no arguments",
    expr: call("getStudyEntryTime", num(1)),
    error: "takes no arguments, got 1",
  },
  { title: "hasSurveyKeyAssigned yes", expr: call("hasSurveyKeyAssigned", str("s2")), state: people, value: true },
  { title: "hasSurveyKeyAssigned no", expr: call("hasSurveyKeyAssigned", str("s9")), state: people, value: false },
  {
    title: "hasSurveyKeyAssigned needs a literal",
    expr: call("hasSurveyKeyAssigned", exp("getParticipantFlagValue", str("group"))),
    error: 'must be a literal string (dtype "str")',
  },
  {
    title: "hasSurveyKeyAssigned missing dtype is not a literal str",
    expr: { name: "hasSurveyKeyAssigned", data: [{ str: "s1" }] },
    error: 'must be a literal string with dtype "str"',
  },
  {
    title: "getSurveyKeyAssignedFrom first match",
    expr: call("getSurveyKeyAssignedFrom", str("s1")),
    state: people,
    value: 10,
  },
  {
    title: "getSurveyKeyAssignedFrom none is -1",
    expr: call("getSurveyKeyAssignedFrom", str("s9")),
    state: people,
    value: -1,
  },
  {
    title: "getSurveyKeyAssignedFrom needs a literal",
    expr: call("getSurveyKeyAssignedFrom", num(1)),
    error: "must be a literal string",
  },
  {
    title: "getSurveyKeyAssignedUntil first match",
    expr: call("getSurveyKeyAssignedUntil", str("s1")),
    state: people,
    value: 20,
  },
  {
    title: "getSurveyKeyAssignedUntil none is -1",
    expr: call("getSurveyKeyAssignedUntil", str("s9")),
    state: people,
    value: -1,
  },
  {
    title: "getSurveyKeyAssignedUntil arity",
    expr: call("getSurveyKeyAssignedUntil"),
    error: "takes exactly 1 argument, got 0",
  },
  { title: "hasStudyStatus yes", expr: call("hasStudyStatus", str("active")), state: people, value: true },
  {
    title: "hasStudyStatus argument fails",
    expr: call("hasStudyStatus", failing),
    state: people,
    value: false,
    error: "item not found",
  },
  {
    title: "hasParticipantFlag equal",
    expr: call("hasParticipantFlag", str("group"), str("A")),
    state: people,
    value: true,
  },
  {
    title: "hasParticipantFlag different",
    expr: call("hasParticipantFlag", str("group"), str("B")),
    state: people,
    value: false,
  },
  {
    title: "hasParticipantFlag number argument",
    expr: call("hasParticipantFlag", str("group"), num(1)),
    error: "value must be a string, got a number",
  },
  { title: "hasParticipantFlagKey yes", expr: call("hasParticipantFlagKey", str("group")), state: people, value: true },
  {
    title: "hasParticipantFlagKey ignores inherited names",
    expr: call("hasParticipantFlagKey", str("constructor")),
    state: people,
    value: false,
  },
  {
    title: "hasParticipantFlagKey argument fails",
    expr: call("hasParticipantFlagKey", failing),
    error: "item not found",
  },
  { title: "getParticipantFlagValue", expr: call("getParticipantFlagValue", str("group")), state: people, value: "A" },
  {
    title: "getParticipantFlagValue absent",
    expr: call("getParticipantFlagValue", str("nope")),
    state: people,
    value: "",
  },
  {
    title: "getParticipantFlagValue argument fails",
    expr: call("getParticipantFlagValue", failing),
    value: "",
    error: "item not found",
  },
  { title: "hasLinkingCode yes", expr: call("hasLinkingCode", str("code")), state: people, value: true },
  { title: "hasLinkingCode number", expr: call("hasLinkingCode", num(0)), error: "must be a string" },
  { title: "getLinkingCodeValue", expr: call("getLinkingCodeValue", str("code")), state: people, value: "X1" },
  { title: "getLinkingCodeValue argument fails", expr: call("getLinkingCodeValue", failing), error: "item not found" },
  {
    title: "getLastSubmissionDate of a survey",
    expr: call("getLastSubmissionDate", str("s1")),
    state: people,
    value: 100,
  },
  { title: "getLastSubmissionDate latest overall", expr: call("getLastSubmissionDate"), state: people, value: 200 },
  {
    title: "getLastSubmissionDate never is 0",
    expr: call("getLastSubmissionDate", str("s9")),
    state: people,
    value: 0,
  },
  {
    title: "getLastSubmissionDate argument fails",
    expr: call("getLastSubmissionDate", failing),
    error: "item not found",
  },
  {
    title: "lastSubmissionDateOlderThan with key",
    expr: call("lastSubmissionDateOlderThan", num(150), str("s1")),
    state: people,
    value: true,
  },
  {
    title: "lastSubmissionDateOlderThan never submitted is false",
    expr: call("lastSubmissionDateOlderThan", num(150), str("s9")),
    state: people,
    value: false,
  },
  {
    title: "lastSubmissionDateOlderThan all",
    expr: call("lastSubmissionDateOlderThan", num(150)),
    state: people,
    value: false,
  },
  {
    title: "lastSubmissionDateOlderThan none at all is true",
    expr: call("lastSubmissionDateOlderThan", num(150)),
    value: true,
  },
  {
    title: "lastSubmissionDateOlderThan string reference",
    expr: call("lastSubmissionDateOlderThan", str("150")),
    error: "refTime must be a number",
  },
  {
    title: "hasMessageTypeAssigned yes",
    expr: call("hasMessageTypeAssigned", str("reminder")),
    state: people,
    value: true,
  },
  {
    title: "hasMessageTypeAssigned number never matches",
    expr: call("hasMessageTypeAssigned", num(1)),
    state: people,
    value: false,
  },
  {
    title: "hasMessageTypeAssigned argument fails",
    expr: call("hasMessageTypeAssigned", failing),
    error: "item not found",
  },
  {
    title: "getMessageNextTime earliest, a plain number",
    expr: call("getMessageNextTime", str("reminder")),
    state: people,
    value: 300,
  },
  {
    title: "getMessageNextTime zero time counts as none",
    expr: call("getMessageNextTime", str("other")),
    state: people,
    value: 0,
    error: "no message for this type found",
  },
  { title: "getCurrentStudySession", expr: call("getCurrentStudySession"), state: people, value: "sess-1" },
  {
    title: "getCurrentStudySession arity",
    expr: call("getCurrentStudySession", str("x")),
    error: "takes no arguments",
  },
];

/** The same readers against event.mergeWithParticipant, with a current state that would give other answers. */
const incomingCases: Case[] = participantCases.map((c) => ({
  ...c,
  title: `incomingState:${c.title}`,
  expr: { ...c.expr, name: `incomingState:${c.expr.name}` },
  state: { studyStatus: "other", enteredAt: 5, flags: { group: "Z" } },
  event: { ...c.event, type: "MERGE", mergeWithParticipant: participant(c.state ?? {}) },
}));

const comparisonCases: Case[] = [
  { title: "eq strings", expr: call("eq", str("a"), str("a")), value: true },
  { title: "eq numbers", expr: call("eq", num(2), exp("sum", num(1), num(1))), value: true },
  { title: "eq mixed types", expr: call("eq", str("1"), num(1)), value: false, error: "could not cast arguments" },
  {
    title: "eq boolean first",
    expr: call("eq", exp("checkEventType", str("CUSTOM")), num(1)),
    error: "I don't know about type bool",
  },
  { title: "lt numbers", expr: call("lt", num(1), num(2)), value: true },
  { title: "lt byte-wise strings", expr: call("lt", str("B"), str("a")), value: true },
  {
    title: "lt code points beyond the BMP sort after U+FFxx",
    expr: call("lt", str("\uff61"), str("\u{1f600}")),
    value: true,
  },
  { title: "lt mixed types", expr: call("lt", num(1), str("2")), error: "could not cast arguments" },
  { title: "lte equal", expr: call("lte", num(2), num(2)), value: true },
  {
    title: "lte null first",
    expr: call("lte", exp("externalEventEval", str("svc")), num(2)),
    seed: external({}),
    error: "I don't know about type <nil>",
  },
  { title: "gt strings", expr: call("gt", str("b"), str("a")), value: true },
  { title: "gt unknown type wording", expr: call("gt", exp("not", num(0)), num(1)), error: "unexpected type bool" },
  { title: "gte numbers", expr: call("gte", num(1), num(2)), value: false },
  {
    title: "gte object first",
    expr: call("gte", exp("externalEventEval", str("svc")), num(2)),
    seed: external({ value: { a: 1 } }),
    error: "I don't know about type map[string]interface {}",
  },
  {
    title: "getMessageNextTime is comparable",
    expr: call("lt", exp("getMessageNextTime", str("reminder")), num(400)),
    state: people,
    value: true,
  },
];

const logicCases: Case[] = [
  { title: "and all true", expr: call("and", exp("checkEventType", str("CUSTOM")), num(1)), value: true },
  { title: "and with 0", expr: call("and", num(1), num(0)), value: false },
  { title: "and ignores strings", expr: call("and", str("x"), str("")), value: true },
  { title: "and stops at false before an error", expr: call("and", num(0), failing), value: false },
  { title: "and error", expr: call("and", num(1), failing), value: false, error: "item not found" },
  { title: "or skips errors", expr: call("or", failing, exp("checkEventType", str("CUSTOM"))), value: true },
  { title: "or negative numbers are false", expr: call("or", num(-1), num(0)), value: false },
  { title: "or positive number", expr: call("or", num(0), num(0.5)), value: true },
  { title: "or arity", expr: call("or", num(1)), error: "takes at least 2 arguments, got 1" },
  { title: "not boolean", expr: call("not", exp("checkEventType", str("X"))), value: true },
  { title: "not number 0", expr: call("not", num(0)), value: true },
  { title: "not number 2", expr: call("not", num(2)), value: false },
  { title: "not string is false", expr: call("not", str("")), value: false },
  { title: "not error", expr: call("not", failing), error: "item not found" },
];

const mathCases: Case[] = [
  {
    title: "sum numbers and booleans",
    expr: call("sum", num(1), num(2.5), exp("checkEventType", str("CUSTOM"))),
    value: 4.5,
  },
  { title: "sum skips errors and strings", expr: call("sum", num(1), failing, str("7")), value: 1 },
  { title: "sum of nothing", expr: call("sum"), value: 0 },
  {
    title: "sum exp without expression",
    expr: { name: "sum", data: [{ dtype: "exp", exp: null }] },
    error: "is missing",
  },
  { title: "neg", expr: call("neg", num(3)), value: -3 },
  {
    title: "neg of a failing argument",
    expr: call("neg", exp("parseValueAsNum", str("x"))),
    value: 0,
    error: "invalid syntax",
  },
  { title: "parseValueAsNum string", expr: call("parseValueAsNum", str("12.5")), value: 12.5 },
  { title: "parseValueAsNum exponent", expr: call("parseValueAsNum", str("1e3")), value: 1000 },
  { title: "parseValueAsNum number passes", expr: call("parseValueAsNum", num(4)), value: 4 },
  {
    title: "parseValueAsNum rejects blanks",
    expr: call("parseValueAsNum", str(" 1")),
    error: 'strconv.ParseFloat: parsing " 1": invalid syntax',
  },
  {
    title: "parseValueAsNum boolean",
    expr: call("parseValueAsNum", exp("not", num(1))),
    error: "argument 1 should be resolved as type string",
  },
  { title: "generateRandomNumber in range", expr: call("generateRandomNumber", num(3), num(3)), value: 3 },
  {
    title: "generateRandomNumber max < min",
    expr: call("generateRandomNumber", num(5), num(1)),
    error: "max must not be smaller than min",
  },
  {
    title: "generateRandomNumber over a range too wide for exact integers",
    expr: call("generateRandomNumber", num(-1e308), num(1e308)),
    error: "generateRandomNumber: min must be a finite whole number (at most 9007199254740991 either way), got -1e+308",
  },
];

const timeCases: Case[] = [
  { title: "timestampWithOffset from now", expr: call("timestampWithOffset", num(10.9)), value: NOW + 10 },
  { title: "timestampWithOffset from reference", expr: call("timestampWithOffset", num(-10), num(100)), value: 90 },
  {
    title: "timestampWithOffset with an infinite delta",
    expr: call("timestampWithOffset", exp("parseValueAsNum", str("inf"))),
    value: 0,
    error: `reference + delta must be a finite whole number of seconds (at most 9007199254740991 either way), got ${NOW} + Infinity`,
  },
  {
    title: "getTsForNextStartOfMonth in the study's zone",
    expr: call("getTsForNextStartOfMonth", num(3), num(NOW)),
    timeZone: "Europe/Amsterdam",
    value: Date.UTC(2024, 1, 29, 23) / 1000,
  },
  {
    title: "dateToStr with an invalid zone",
    expr: call("dateToStr", num(NOW), str("yyyy")),
    timeZone: "Nowhere/Special",
    value: "",
    error: 'dateToStr: invalid time zone "Nowhere/Special" (not an IANA zone name)',
  },
  {
    title: "timestampWithOffset string delta",
    expr: call("timestampWithOffset", str("10")),
    error: "delta must be a number",
  },
  {
    title: "getTsForNextStartOfMonth later this year",
    expr: call("getTsForNextStartOfMonth", num(3), num(NOW)),
    value: Date.UTC(2024, 2, 1) / 1000,
  },
  {
    title: "getTsForNextStartOfMonth by name, next year",
    expr: call("getTsForNextStartOfMonth", str("Jan"), num(NOW + 5)),
    value: Date.UTC(2025, 0, 1) / 1000,
  },
  {
    title: "getTsForNextStartOfMonth exactly at the start",
    expr: call("getTsForNextStartOfMonth", str("january"), num(NOW)),
    value: NOW,
  },
  {
    title: "getTsForNextStartOfMonth invalid literal",
    expr: call("getTsForNextStartOfMonth", str("Smarch")),
    error: "invalid month name: Smarch",
  },
  {
    title: "getTsForNextStartOfMonth invalid computed month",
    expr: call("getTsForNextStartOfMonth", exp("getEventPayloadValueAsNum", str("m"))),
    event: { payload: { m: 13 } },
    error: "month number should be between 1 and 12",
  },
  { title: "getISOWeekForTs", expr: call("getISOWeekForTs", num(Date.UTC(2021, 0, 3) / 1000)), value: 53 },
  {
    title: "getISOWeekForTs argument fails",
    expr: call("getISOWeekForTs", exp("parseValueAsNum", str("?"))),
    error: "invalid syntax",
  },
  {
    title: "getTsForNextISOWeek later week, time of day kept",
    expr: call("getTsForNextISOWeek", num(3), num(NOW + 3600)),
    value: NOW + 14 * 86400 + 3600,
  },
  {
    title: "getTsForNextISOWeek Sunday of the target week gives its Monday",
    expr: call("getTsForNextISOWeek", num(1), num(NOW + 6 * 86400)),
    value: NOW,
  },
  { title: "getTsForNextISOWeek week 54", expr: call("getTsForNextISOWeek", num(54)), error: "between 1 and 53" },
  {
    title: "dateToStr UTC with quoted text",
    expr: call(
      "dateToStr",
      num(NOW + 13 * 3600 + 5 * 60 + 9),
      str("yyyy-MM-dd 'at' hh:mm:ss a, d/M/yy H:m:s 'o''clock'"),
    ),
    value: "2024-01-01 at 01:05:09 PM, 1/1/24 H:5:9 o'clock",
  },
  {
    title: "dateToStr letters outside quotes are tokens",
    expr: call("dateToStr", num(NOW), str("dd.MM.yyyy HH'h'")),
    value: "01.01.2024 00h",
  },
  {
    title: "dateToStr format argument fails",
    expr: call("dateToStr", num(NOW), failing),
    value: "",
    error: "item not found",
  },
];

const externalCases: Case[] = [
  {
    title: "externalEventEval value",
    expr: call("externalEventEval", str("svc"), str("/score")),
    seed: external({ value: 7 }),
    value: 7,
  },
  {
    title: "externalEventEval float must be a number",
    expr: { ...call("externalEventEval", str("svc")), returnType: "float" },
    seed: external({ value: "7" }),
    error: "externalEventEval: expected a number, got string",
  },
  {
    title: "externalEventEval unknown service",
    expr: call("externalEventEval", str("nope")),
    error: "no external service config found with name: nope",
  },
];

const families: Record<string, Case[]> = {
  event: eventCases,
  response: responseCases,
  "old responses": oldResponseCases,
  "study data": studyDataCases,
  participant: participantCases,
  "incoming state": incomingCases,
  comparison: comparisonCases,
  logic: logicCases,
  math: mathCases,
  time: timeCases,
  external: externalCases,
};

async function run(c: Case) {
  const base = environment(c.seed ?? {}, c.services);
  const env = c.timeZone === undefined ? base : { ...base, timeZone: c.timeZone };
  return evaluateExpression(c.expr, participant(c.state ?? {}), event(c.event ?? {}), env);
}

describe.each(Object.entries(families))("%s expressions", (_family, cases) => {
  it.each(cases)("$title", async (c) => {
    const result = await run(c);
    if (c.error === undefined) expect(result.error).toBeUndefined();
    else if (typeof c.error === "string") expect(result.error).toContain(c.error);
    else expect(result.error).toMatch(c.error);
    if ("value" in c) expect(result.value).toEqual(c.value);
  });
});

describe("expression coverage", () => {
  const all = Object.values(families).flat();
  it("has a succeeding and a failing case for each of the 73 expressions", () => {
    expect(expressionNames).toHaveLength(73);
    const missing = expressionNames.filter(
      (name) =>
        !all.some((c) => c.expr.name === name && c.error === undefined) ||
        !all.some((c) => c.expr.name === name && c.error !== undefined),
    );
    expect(missing).toEqual([]);
  });
});
