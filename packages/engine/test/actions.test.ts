// Every action, table-driven: at least one case that succeeds and one that fails.
import { describe, expect, it } from "vitest";
import type { ApplyResult, EngineServices, Expression, ParticipantState, StudyEvent } from "../src/index";
import { actionNames, applyAction, createInMemoryServices } from "../src/index";
import type { InMemorySeed, InMemoryServices } from "../src/index";
import { NOW, call, environment, event, exp, failingServices, num, participant, snapshotOf, str } from "./builders";

interface Case {
  title: string;
  action: Expression;
  state?: Partial<ParticipantState>;
  event?: Partial<StudyEvent>;
  seed?: InMemorySeed;
  /** Services to use instead of in-memory ones built from `seed`. */
  services?: EngineServices;
  /** Expected error (substring or pattern); absent means the action must succeed. */
  error?: string | RegExp;
  /** Checks on the result (and on the in-memory services after the action, when built from `seed`). */
  expect?: (result: ApplyResult, services: InMemoryServices | undefined) => void;
}

const failing = exp("getResponseValueAsStr", str("missing"), str("rg"));
const confidential = { participantIDForConfidentialResponses: "conf-1" };
const external = (reply: unknown): InMemorySeed => ({ externalServices: { svc: () => reply } });
/** A value of any type from an external service, to reach the run-time type checks. */
const externalValue = (value: unknown): InMemorySeed => external({ value });
const surveys = [
  { surveyKey: "a", validFrom: 1, validUntil: 2, category: "normal" },
  { surveyKey: "b", validFrom: 3, validUntil: 4, category: "normal" },
  { surveyKey: "a", validFrom: 5, validUntil: 6, category: "prio" },
];
const variables: InMemorySeed = {
  variables: [
    { key: "open", type: "boolean", value: false },
    { key: "limit", type: "int", value: 1 },
    { key: "ratio", type: "float", value: 0.5 },
    { key: "label", type: "string", value: "x" },
    { key: "start", type: "date", value: 0 },
  ],
};
const variable = (services: InMemoryServices | undefined, key: string) =>
  services?.snapshot().variables.find((v) => v.key === key)?.value;

const controlCases: Case[] = [
  {
    title: "IF takes the then-branch",
    action: call(
      "IF",
      exp("checkEventType", str("CUSTOM")),
      exp("UPDATE_FLAG", str("f"), str("then")),
      exp("UPDATE_FLAG", str("f"), str("else")),
    ),
    expect: (r) => expect(r.state.flags).toEqual({ f: "then" }),
  },
  {
    title: "IF takes the else-branch (a condition returning 1 is false)",
    action: call(
      "IF",
      exp("sum", num(1)),
      exp("UPDATE_FLAG", str("f"), str("then")),
      exp("UPDATE_FLAG", str("f"), str("else")),
    ),
    expect: (r) => expect(r.state.flags).toEqual({ f: "else" }),
  },
  {
    title: "IF with a literal condition",
    action: call("IF", num(2), exp("UPDATE_FLAG", str("f"), str("then"))),
    expect: (r) => expect(r.state.flags).toEqual({ f: "then" }),
  },
  {
    title: "IF propagates the branch error",
    action: call("IF", num(1), exp("UPDATE_FLAG", str("f"), failing)),
    error: "rule 0: UPDATE_FLAG: item not found",
  },
  {
    title: "DO runs in order",
    action: call(
      "DO",
      exp("UPDATE_FLAG", str("f"), str("1")),
      exp("UPDATE_FLAG", str("f"), exp("getParticipantFlagValue", str("f"))),
    ),
    expect: (r) => expect(r.state.flags).toEqual({ f: "1" }),
  },
  {
    title: "DO stops at the first error",
    action: call(
      "DO",
      exp("UPDATE_FLAG", str("a"), str("1")),
      exp("REMOVE_FLAG", failing),
      exp("UPDATE_FLAG", str("b"), str("1")),
    ),
    error: "rule 0: REMOVE_FLAG: item not found",
    expect: (r) => expect(r.state.flags).toEqual({}),
  },
  {
    title: "IFTHEN runs every action",
    action: call(
      "IFTHEN",
      exp("checkEventType", str("CUSTOM")),
      exp("UPDATE_FLAG", str("a"), str("1")),
      exp("UPDATE_FLAG", str("b"), str("2")),
    ),
    expect: (r) => expect(r.state.flags).toEqual({ a: "1", b: "2" }),
  },
  {
    title: "IFTHEN with a false condition does nothing",
    action: call("IFTHEN", exp("checkEventType", str("SUBMIT")), exp("UPDATE_FLAG", str("a"), str("1"))),
    expect: (r) => expect(r.changedPerRule).toEqual([false]),
  },
  {
    title: "IFTHEN runs every action, skips the failing ones and reports each with its path",
    action: call(
      "IFTHEN",
      num(1),
      exp("REMOVE_FLAG", failing),
      exp("UPDATE_FLAG", str("a"), str("1")),
      exp("SEND_MESSAGE_NOW", str("t")),
      exp("UPDATE_FLAG", str("b"), str("2")),
    ),
    expect: (r) => {
      expect(r.error).toBeUndefined();
      expect(r.state.flags).toEqual({ a: "1", b: "2" });
      expect(r.changedPerRule).toEqual([true]);
      expect(r.skippedActions).toEqual([
        { ruleIndex: 0, path: "action.data[1].exp.data[0].exp", message: "REMOVE_FLAG: item not found" },
        {
          ruleIndex: 0,
          path: "action.data[3].exp",
          message: "SEND_MESSAGE_NOW: missing participantID for confidential responses",
        },
      ]);
    },
  },
  {
    title: "IFTHEN drops a failing action's own partial changes",
    action: call(
      "IFTHEN",
      num(1),
      exp("DO", exp("UPDATE_FLAG", str("partial"), str("x")), exp("REMOVE_FLAG", failing)),
      exp("UPDATE_FLAG", str("after"), str("y")),
    ),
    expect: (r) => {
      expect(r.error).toBeUndefined();
      expect(r.state.flags).toEqual({ after: "y" });
      expect(r.skippedActions?.map((s) => s.path)).toEqual(["action.data[1].exp.data[1].exp.data[0].exp"]);
    },
  },
  {
    title: "IFTHEN fails itself only where every action does: a SUBMIT without a response key",
    action: call("IFTHEN", num(1), exp("UPDATE_FLAG", str("a"), str("1"))),
    event: { type: "SUBMIT", response: { key: "" } },
    error: "rule 0: IFTHEN: no response key found",
  },
  {
    title: "IFTHEN with a failing condition runs nothing and reports nothing",
    action: call("IFTHEN", failing, exp("UPDATE_FLAG", str("a"), str("1"))),
    expect: (r) => {
      expect(r.error).toBeUndefined();
      expect(r.skippedActions).toBeUndefined();
      expect(r.state.flags).toEqual({});
    },
  },
];

const participantCases: Case[] = [
  {
    title: "UPDATE_STUDY_STATUS",
    action: call("UPDATE_STUDY_STATUS", str("finished")),
    expect: (r) => expect(r.state.studyStatus).toBe("finished"),
  },
  {
    title: "UPDATE_STUDY_STATUS non-string",
    action: call("UPDATE_STUDY_STATUS", exp("externalEventEval", str("svc"))),
    seed: externalValue(3),
    error: "UPDATE_STUDY_STATUS: could not parse argument",
  },
  {
    title: "START_NEW_STUDY_SESSION: hex seconds + 8 random hex digits",
    action: call("START_NEW_STUDY_SESSION"),
    expect: (r) => expect(r.state.currentStudySession).toMatch(new RegExp(`^${NOW.toString(16)}[0-9a-f]{8}$`)),
  },
  {
    title: "START_NEW_STUDY_SESSION on a SUBMIT without response key",
    action: call("START_NEW_STUDY_SESSION"),
    event: { type: "SUBMIT", response: { key: "" } },
    error: "START_NEW_STUDY_SESSION: no response key found",
  },
  {
    title: "UPDATE_FLAG string",
    action: call("UPDATE_FLAG", str("f"), str("x")),
    expect: (r) => expect(r.state.flags["f"]).toBe("x"),
  },
  {
    title: "UPDATE_FLAG number has six decimals",
    action: call("UPDATE_FLAG", str("f"), num(1)),
    expect: (r) => expect(r.state.flags["f"]).toBe("1.000000"),
  },
  {
    title: "UPDATE_FLAG fraction",
    action: call("UPDATE_FLAG", str("f"), num(-2.5)),
    expect: (r) => expect(r.state.flags["f"]).toBe("-2.500000"),
  },
  {
    title: "UPDATE_FLAG boolean",
    action: call("UPDATE_FLAG", str("f"), exp("checkEventType", str("CUSTOM"))),
    expect: (r) => expect(r.state.flags["f"]).toBe("true"),
  },
  {
    title: "UPDATE_FLAG other values become empty",
    action: call("UPDATE_FLAG", str("f"), exp("externalEventEval", str("svc"))),
    seed: externalValue({ a: 1 }),
    expect: (r) => expect(r.state.flags["f"]).toBe(""),
  },
  {
    title: "UPDATE_FLAG key __proto__ is an ordinary key",
    action: call("UPDATE_FLAG", str("__proto__"), str("x")),
    expect: (r) => expect(Object.hasOwn(r.state.flags, "__proto__")).toBe(true),
  },
  {
    title: "UPDATE_FLAG non-string key",
    action: call("UPDATE_FLAG", exp("externalEventEval", str("svc")), str("x")),
    seed: externalValue(1),
    error: "rule 0: UPDATE_FLAG: could not parse flag key",
  },
  {
    title: "REMOVE_FLAG",
    action: call("REMOVE_FLAG", str("a")),
    state: { flags: { a: "1", b: "2" } },
    expect: (r) => expect(r.state.flags).toEqual({ b: "2" }),
  },
  { title: "REMOVE_FLAG argument fails", action: call("REMOVE_FLAG", failing), error: "REMOVE_FLAG: item not found" },
  {
    title: "SET_LINKING_CODE",
    action: call("SET_LINKING_CODE", str("k"), str("v")),
    expect: (r) => expect(r.state.linkingCodes).toEqual({ k: "v" }),
  },
  {
    title: "SET_LINKING_CODE non-string value",
    action: call("SET_LINKING_CODE", str("k"), exp("externalEventEval", str("svc"))),
    seed: externalValue(true),
    error: "SET_LINKING_CODE: could not parse value",
  },
  {
    title: "DELETE_LINKING_CODE one",
    action: call("DELETE_LINKING_CODE", str("a")),
    state: { linkingCodes: { a: "1", b: "2" } },
    expect: (r) => expect(r.state.linkingCodes).toEqual({ b: "2" }),
  },
  {
    title: "DELETE_LINKING_CODE all",
    action: call("DELETE_LINKING_CODE"),
    state: { linkingCodes: { a: "1" } },
    expect: (r) => expect(r.state.linkingCodes).toEqual({}),
  },
  {
    title: "DELETE_LINKING_CODE argument fails",
    action: call("DELETE_LINKING_CODE", failing),
    error: "DELETE_LINKING_CODE: item not found",
  },
];

const surveyCases: Case[] = [
  {
    title: "ADD_NEW_SURVEY appends, duplicates allowed",
    action: call("ADD_NEW_SURVEY", str("a"), exp("timestampWithOffset", num(0)), num(NOW + 10.7), str("prio")),
    state: { assignedSurveys: [surveys[0]!] },
    expect: (r) =>
      expect(r.state.assignedSurveys).toEqual([
        surveys[0],
        { surveyKey: "a", validFrom: NOW, validUntil: NOW + 10, category: "prio" },
      ]),
  },
  {
    title: "ADD_NEW_SURVEY non-number times become 0",
    action: call("ADD_NEW_SURVEY", str("a"), str("soon"), str(""), str("normal")),
    expect: (r) =>
      expect(r.state.assignedSurveys).toEqual([{ surveyKey: "a", validFrom: 0, validUntil: 0, category: "normal" }]),
  },
  {
    title: "ADD_NEW_SURVEY arity",
    action: call("ADD_NEW_SURVEY", str("a"), num(0), num(0)),
    error: "ADD_NEW_SURVEY takes exactly 4 arguments, got 3",
  },
  {
    title: "ADD_NEW_SURVEY non-string key",
    action: call("ADD_NEW_SURVEY", exp("externalEventEval", str("svc")), num(0), num(0), str("n")),
    seed: externalValue(null),
    error: "ADD_NEW_SURVEY: could not parse arguments",
  },
  {
    title: "REMOVE_ALL_SURVEYS",
    action: call("REMOVE_ALL_SURVEYS"),
    state: { assignedSurveys: surveys },
    expect: (r) => expect(r.state.assignedSurveys).toEqual([]),
  },
  {
    title: "REMOVE_ALL_SURVEYS takes no arguments",
    action: call("REMOVE_ALL_SURVEYS", str("a")),
    error: "REMOVE_ALL_SURVEYS takes no arguments, got 1",
  },
  {
    title: "REMOVE_SURVEY_BY_KEY first",
    action: call("REMOVE_SURVEY_BY_KEY", str("a"), str("first")),
    state: { assignedSurveys: surveys },
    expect: (r) => expect(r.state.assignedSurveys).toEqual([surveys[1], surveys[2]]),
  },
  {
    title: "REMOVE_SURVEY_BY_KEY last",
    action: call("REMOVE_SURVEY_BY_KEY", str("a"), str("last")),
    state: { assignedSurveys: surveys },
    expect: (r) => expect(r.state.assignedSurveys).toEqual([surveys[0], surveys[1]]),
  },
  {
    title: "REMOVE_SURVEY_BY_KEY literal position checked",
    action: call("REMOVE_SURVEY_BY_KEY", str("a"), str("middle")),
    error: 'position must be one of "first", "last", got "middle"',
  },
  {
    title: "REMOVE_SURVEY_BY_KEY computed unknown position",
    action: call("REMOVE_SURVEY_BY_KEY", str("a"), exp("getEventPayloadValueAsStr", str("pos"))),
    event: { payload: { pos: "middle" } },
    error: "rule 0: REMOVE_SURVEY_BY_KEY: position not known",
  },
  {
    title: "REMOVE_SURVEYS_BY_KEY",
    action: call("REMOVE_SURVEYS_BY_KEY", str("a")),
    state: { assignedSurveys: surveys },
    expect: (r) => expect(r.state.assignedSurveys).toEqual([surveys[1]]),
  },
  {
    title: "REMOVE_SURVEYS_BY_KEY argument fails",
    action: call("REMOVE_SURVEYS_BY_KEY", failing),
    error: "REMOVE_SURVEYS_BY_KEY: item not found",
  },
];

const messageCases: Case[] = [
  {
    title: "ADD_MESSAGE with an id from env.newId",
    action: call("ADD_MESSAGE", str("reminder"), num(NOW + 60.5)),
    expect: (r) =>
      expect(r.state.messages).toEqual([{ id: "000000000000000000000001", type: "reminder", scheduledFor: NOW + 60 }]),
  },
  {
    title: "ADD_MESSAGE string time",
    action: call("ADD_MESSAGE", str("reminder"), str("soon")),
    error: "scheduledFor must be a number",
  },
  {
    title: "REMOVE_ALL_MESSAGES",
    action: call("REMOVE_ALL_MESSAGES"),
    state: { messages: [{ id: "1", type: "a", scheduledFor: 1 }] },
    expect: (r) => expect(r.state.messages).toEqual([]),
  },
  {
    title: "REMOVE_ALL_MESSAGES on a SUBMIT without response key",
    action: call("REMOVE_ALL_MESSAGES"),
    event: { type: "SUBMIT" },
    error: "REMOVE_ALL_MESSAGES: no response key found",
  },
  {
    title: "REMOVE_MESSAGES_BY_TYPE",
    action: call("REMOVE_MESSAGES_BY_TYPE", str("a")),
    state: {
      messages: [
        { id: "1", type: "a", scheduledFor: 1 },
        { id: "2", type: "b", scheduledFor: 2 },
      ],
    },
    expect: (r) => expect(r.state.messages).toEqual([{ id: "2", type: "b", scheduledFor: 2 }]),
  },
  {
    title: "REMOVE_MESSAGES_BY_TYPE argument fails",
    action: call("REMOVE_MESSAGES_BY_TYPE", failing),
    error: "REMOVE_MESSAGES_BY_TYPE: item not found",
  },
  {
    title: "NOTIFY_RESEARCHER with pairs; a trailing key is not even evaluated",
    action: call("NOTIFY_RESEARCHER", str("alert"), str("k1"), str("v1"), failing),
    expect: (r) =>
      expect(r.effects).toEqual([
        { kind: "notify-researcher", messageType: "alert", participantId: "p1", payload: { k1: "v1" } },
      ]),
  },
  {
    title: "NOTIFY_RESEARCHER non-string value",
    action: call("NOTIFY_RESEARCHER", str("alert"), str("k"), exp("externalEventEval", str("svc"))),
    seed: externalValue(3),
    error: "NOTIFY_RESEARCHER: could not parse value",
  },
  {
    title: "SEND_MESSAGE_NOW builds the payload",
    action: call("SEND_MESSAGE_NOW", str(" invite "), str("de")),
    state: { flags: { group: "A" }, linkingCodes: { code: "X" } },
    event: { ...confidential, payload: { n: 1_000_000, s: "t", list: [1, "a"], nested: { b: true, a: null } } },
    expect: (r) =>
      expect(r.effects).toEqual([
        {
          kind: "send-message",
          messageType: "invite",
          confidentialId: "conf-1",
          languageOverride: "de",
          payload: {
            studyKey: "study1",
            "flags.group": "A",
            "linkingCodes.code": "X",
            "eventData.n": "1e+06",
            "eventData.s": "t",
            "eventData.list": "[1 a]",
            "eventData.nested": "map[a:<nil> b:true]",
          },
        },
      ]),
  },
  {
    title: "SEND_MESSAGE_NOW needs the confidential id",
    action: call("SEND_MESSAGE_NOW", str("invite")),
    error: "rule 0: SEND_MESSAGE_NOW: missing participantID for confidential responses",
  },
  {
    title: "SEND_MESSAGE_NOW blank type",
    action: call("SEND_MESSAGE_NOW", str("  ")),
    event: confidential,
    error: "SEND_MESSAGE_NOW: could not parse arguments",
  },
  {
    title: "SEND_MESSAGE_NOW of a type the study has a template for",
    action: call("SEND_MESSAGE_NOW", str("invite")),
    event: confidential,
    seed: { messageTemplates: ["invite"] },
    expect: (r) => expect(r.effects.map((e) => e.kind === "send-message" && e.messageType)).toEqual(["invite"]),
  },
  {
    title: "SEND_MESSAGE_NOW of a type without a template fails with the port's reason and sends nothing",
    action: call("SEND_MESSAGE_NOW", str("invite")),
    event: confidential,
    seed: { messageTemplates: ["reminder"] },
    error: 'rule 0: SEND_MESSAGE_NOW: no template for message type "invite"',
    expect: (r) => expect(r.effects).toEqual([]),
  },
  {
    title: "SEND_MESSAGE_NOW asks the port with the whole message",
    action: call("SEND_MESSAGE_NOW", str("invite"), str("de")),
    state: { flags: { group: "A" } },
    event: confidential,
    services: {
      ...createInMemoryServices(),
      refuseMessage: (message) => Promise.resolve(`refused ${JSON.stringify(message)}`),
    },
    error:
      'SEND_MESSAGE_NOW: refused {"messageType":"invite","confidentialId":"conf-1","languageOverride":"de",' +
      '"payload":{"studyKey":"study1","flags.group":"A"}}',
  },
  {
    title: "SEND_MESSAGE_NOW whose port rejects fails",
    action: call("SEND_MESSAGE_NOW", str("invite")),
    event: confidential,
    services: failingServices("refuseMessage"),
    error: "SEND_MESSAGE_NOW: refuseMessage failed",
  },
  {
    title: "SEND_MESSAGE_NOW refused inside IFTHEN: skipped, the rule's other actions stand",
    action: call(
      "IFTHEN",
      exp("checkEventType", str("CUSTOM")),
      exp("UPDATE_FLAG", str("before"), str("kept")),
      exp("SEND_MESSAGE_NOW", str("invite")),
      exp("SEND_MESSAGE_NOW", str("reminder")),
      exp("UPDATE_FLAG", str("after"), str("kept")),
    ),
    event: confidential,
    seed: { messageTemplates: ["reminder"] },
    expect: (r) => {
      expect(r.state.flags).toEqual({ before: "kept", after: "kept" });
      expect(r.effects.map((e) => e.kind === "send-message" && e.messageType)).toEqual(["reminder"]);
      expect(r.skippedActions).toEqual([
        {
          ruleIndex: 0,
          path: "action.data[2].exp",
          message: 'SEND_MESSAGE_NOW: no template for message type "invite"',
        },
      ]);
    },
  },
];

const reportCases: Case[] = [
  {
    title: "INIT_REPORT prepends, twice gives two reports",
    action: call("DO", exp("INIT_REPORT", str("r1")), exp("INIT_REPORT", str("r2")), exp("INIT_REPORT", str("r1"))),
    expect: (r) => {
      expect(r.reports.map((x) => x.key)).toEqual(["r1", "r2", "r1"]);
      expect(r.reports[0]).toEqual({ key: "r1", participantId: "p1", timestamp: NOW, data: [] });
    },
  },
  { title: "INIT_REPORT argument fails", action: call("INIT_REPORT", failing), error: "INIT_REPORT: item not found" },
  {
    title: "UPDATE_REPORT_DATA formats and upserts in the most recent report",
    action: call(
      "DO",
      exp("INIT_REPORT", str("r")),
      exp("UPDATE_REPORT_DATA", str("r"), str("count"), num(3.9), str("int")),
      exp("UPDATE_REPORT_DATA", str("r"), str("score"), num(1.5)),
      exp("UPDATE_REPORT_DATA", str("r"), str("ok"), exp("checkEventType", str("CUSTOM")), str("string")),
      exp("UPDATE_REPORT_DATA", str("r"), str("score"), num(2), str("float")),
      exp("INIT_REPORT", str("r")),
      exp("UPDATE_REPORT_DATA", str("r"), str("second"), str("x")),
    ),
    expect: (r) =>
      expect(r.reports).toEqual([
        { key: "r", participantId: "p1", timestamp: NOW, data: [{ key: "second", value: "x" }] },
        {
          key: "r",
          participantId: "p1",
          timestamp: NOW,
          data: [
            { key: "count", value: "3", dtype: "int" },
            { key: "score", value: "2.000000", dtype: "float" },
            { key: "ok", value: "true", dtype: "string" },
          ],
        },
      ]),
  },
  {
    title: "UPDATE_REPORT_DATA starts a report when there is none",
    action: call("UPDATE_REPORT_DATA", str("r"), str("a"), str("b")),
    expect: (r) =>
      expect(r.reports).toEqual([{ key: "r", participantId: "p1", timestamp: NOW, data: [{ key: "a", value: "b" }] }]),
  },
  {
    title: "UPDATE_REPORT_DATA number dtype",
    action: call("UPDATE_REPORT_DATA", str("r"), str("a"), str("b"), num(1)),
    error: "dtype must be a string",
  },
  {
    title: "REMOVE_REPORT_DATA",
    action: call(
      "DO",
      exp("UPDATE_REPORT_DATA", str("r"), str("a"), str("1")),
      exp("UPDATE_REPORT_DATA", str("r"), str("b"), str("2")),
      exp("REMOVE_REPORT_DATA", str("r"), str("a")),
    ),
    expect: (r) => expect(r.reports[0]?.data).toEqual([{ key: "b", value: "2" }]),
  },
  {
    title: "REMOVE_REPORT_DATA without a report is a no-op",
    action: call("REMOVE_REPORT_DATA", str("r"), str("a")),
    expect: (r) => expect(r.reports).toEqual([]),
  },
  {
    title: "REMOVE_REPORT_DATA argument fails",
    action: call("REMOVE_REPORT_DATA", failing, str("a")),
    error: "REMOVE_REPORT_DATA: item not found",
  },
  {
    title: "CANCEL_REPORT drops the most recent one",
    action: call(
      "DO",
      exp("INIT_REPORT", str("r")),
      exp("UPDATE_REPORT_DATA", str("r"), str("a"), str("1")),
      exp("INIT_REPORT", str("r")),
      exp("CANCEL_REPORT", str("r")),
    ),
    expect: (r) =>
      expect(r.reports).toEqual([{ key: "r", participantId: "p1", timestamp: NOW, data: [{ key: "a", value: "1" }] }]),
  },
  {
    title: "CANCEL_REPORT arity",
    action: call("CANCEL_REPORT"),
    error: "CANCEL_REPORT takes exactly 1 argument, got 0",
  },
];

const confidentialCases: Case[] = [
  {
    title: "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY",
    action: call("REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY", str("Q1")),
    event: confidential,
    expect: (r) =>
      expect(r.effects).toEqual([{ kind: "remove-confidential-responses", confidentialId: "conf-1", key: "Q1" }]),
  },
  {
    title: "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY needs the confidential id",
    action: call("REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY", str("Q1")),
    error: "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY: missing participantID for confidential responses",
  },
  {
    title: "REMOVE_ALL_CONFIDENTIAL_RESPONSES",
    action: call("REMOVE_ALL_CONFIDENTIAL_RESPONSES"),
    event: confidential,
    expect: (r) => expect(r.effects).toEqual([{ kind: "remove-confidential-responses", confidentialId: "conf-1" }]),
  },
  {
    title: "REMOVE_ALL_CONFIDENTIAL_RESPONSES needs the confidential id",
    action: call("REMOVE_ALL_CONFIDENTIAL_RESPONSES"),
    error: "REMOVE_ALL_CONFIDENTIAL_RESPONSES: missing participantID",
  },
];

const externalCases: Case[] = [
  {
    title: "EXTERNAL_EVENT_HANDLER applies the returned state and reports",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc"), str("/handle")),
    seed: {
      externalServices: {
        svc: (route, body) => {
          const sent = body as { participantState: ParticipantState; eventType: string; studyKey: string };
          return {
            pState: {
              ...sent.participantState,
              studyStatus: `${route}:${sent.eventType}:${sent.studyKey}`,
              flags: { seen: "yes" },
            },
            reportsToCreate: [{ key: "ext", data: [{ key: "a", value: "1" }] }],
          };
        },
      },
    },
    expect: (r) => {
      expect(r.state.studyStatus).toBe("handle:CUSTOM:study1");
      expect(r.state.flags).toEqual({ seen: "yes" });
      expect(r.reports).toEqual([
        { key: "ext", participantId: "p1", timestamp: NOW, data: [{ key: "a", value: "1" }] },
      ]);
    },
  },
  {
    title: "EXTERNAL_EVENT_HANDLER reports as a map",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc")),
    seed: external({ reportsToCreate: { ext: { data: [] } } }),
    expect: (r) => expect(r.reports.map((x) => x.key)).toEqual(["ext"]),
  },
  {
    title: "EXTERNAL_EVENT_HANDLER invalid state",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc")),
    seed: external({ pState: { flags: { a: 1 } } }),
    error: "EXTERNAL_EVENT_HANDLER: returned participant state is invalid: field flags has the wrong type",
  },
  {
    title: "EXTERNAL_EVENT_HANDLER another participant",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc")),
    seed: external({ pState: { participantId: "p2" } }),
    error: "belongs to another participant",
  },
  {
    title: "EXTERNAL_EVENT_HANDLER invalid reports",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc")),
    seed: external({ reportsToCreate: [{ data: "x" }] }),
    error: "reportsToCreate is not a list of reports",
  },
  {
    title: "EXTERNAL_EVENT_HANDLER non-2xx (the port rejects)",
    action: call("EXTERNAL_EVENT_HANDLER", str("svc")),
    services: failingServices("callExternalService"),
    error: "EXTERNAL_EVENT_HANDLER: callExternalService failed",
  },
];

const studyCodeCases: Case[] = [
  {
    title: "REMOVE_STUDY_CODE",
    action: call("REMOVE_STUDY_CODE", str("list"), str("B")),
    seed: { codeLists: { list: ["A", "B"] } },
    expect: (_r, services) => expect(services?.snapshot().codeLists["list"]).toEqual(["A"]),
  },
  {
    title: "REMOVE_STUDY_CODE port fails",
    action: call("REMOVE_STUDY_CODE", str("list"), str("B")),
    services: failingServices("removeCode"),
    error: "REMOVE_STUDY_CODE: removeCode failed",
  },
  {
    title: "DRAW_STUDY_CODE_AS_LINKING_CODE into the list's key",
    action: call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("list")),
    seed: { codeLists: { list: ["A", "B"] } },
    expect: (r, services) => {
      expect(r.state.linkingCodes).toEqual({ list: "A" });
      expect(services?.snapshot().codeLists["list"]).toEqual(["B"]);
    },
  },
  {
    title: "DRAW_STUDY_CODE_AS_LINKING_CODE from an empty list removes the code",
    action: call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("list"), str("code")),
    state: { linkingCodes: { code: "old", other: "x" } },
    expect: (r) => expect(r.state.linkingCodes).toEqual({ other: "x" }),
  },
  {
    title: "DRAW_STUDY_CODE_AS_LINKING_CODE port fails",
    action: call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("list")),
    services: failingServices("drawCode"),
    error: "DRAW_STUDY_CODE_AS_LINKING_CODE: drawCode failed",
  },
];

const counterCases: Case[] = [
  {
    title: "GET_NEXT_STUDY_COUNTER_AS_FLAG with prefix and padding",
    action: call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("id"), str("P-"), num(4)),
    seed: { counters: { c: 5 } },
    expect: (r) => expect(r.state.flags).toEqual({ id: "P-0006" }),
  },
  {
    title: "GET_NEXT_STUDY_COUNTER_AS_FLAG first value, negative padding pads right",
    action: call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("id"), str(""), num(-3)),
    expect: (r) => expect(r.state.flags).toEqual({ id: "1  " }),
  },
  {
    title: "GET_NEXT_STUDY_COUNTER_AS_FLAG padding too wide",
    action: call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("id"), str(""), num(1e9)),
    error: "padding must be between -64 and 64",
  },
  {
    title: "GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE",
    action: call("GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE", str("c"), str("code"), str("X")),
    seed: { counters: { c: 41 } },
    expect: (r) => expect(r.state.linkingCodes).toEqual({ code: "X42" }),
  },
  {
    title: "GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE port fails",
    action: call("GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE", str("c"), str("code")),
    services: failingServices("incrementCounter"),
    error: "GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE: incrementCounter failed",
  },
  {
    title: "RESET_STUDY_COUNTER",
    action: call("DO", exp("RESET_STUDY_COUNTER", str("c")), exp("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("n"))),
    seed: { counters: { c: 9 } },
    expect: (r) => expect(r.state.flags).toEqual({ n: "1" }),
  },
  {
    title: "RESET_STUDY_COUNTER port fails",
    action: call("RESET_STUDY_COUNTER", str("c")),
    services: failingServices("resetCounter"),
    error: "RESET_STUDY_COUNTER: resetCounter failed",
  },
];

const variableCases: Case[] = [
  {
    title: "UPDATE_STUDY_VARIABLE_BOOLEAN",
    action: call("UPDATE_STUDY_VARIABLE_BOOLEAN", str("open"), exp("not", num(0))),
    seed: variables,
    expect: (_r, s) => expect(variable(s, "open")).toBe(true),
  },
  {
    title: "UPDATE_STUDY_VARIABLE_BOOLEAN literal value",
    action: call("UPDATE_STUDY_VARIABLE_BOOLEAN", str("open"), num(1)),
    error: "value must be an expression returning a boolean",
  },
  {
    title: "UPDATE_STUDY_VARIABLE_INT truncates",
    action: call("UPDATE_STUDY_VARIABLE_INT", str("limit"), num(7.9)),
    seed: variables,
    expect: (_r, s) => expect(variable(s, "limit")).toBe(7),
  },
  {
    title: "UPDATE_STUDY_VARIABLE_INT declared type differs",
    action: call("UPDATE_STUDY_VARIABLE_INT", str("ratio"), num(7)),
    seed: variables,
    error: 'UPDATE_STUDY_VARIABLE_INT: variable "ratio" is declared "float", not "int"',
  },
  {
    title: "UPDATE_STUDY_VARIABLE_FLOAT",
    action: call("UPDATE_STUDY_VARIABLE_FLOAT", str("ratio"), num(0.75)),
    seed: variables,
    expect: (_r, s) => expect(variable(s, "ratio")).toBe(0.75),
  },
  {
    title: "UPDATE_STUDY_VARIABLE_FLOAT missing variable",
    action: call("UPDATE_STUDY_VARIABLE_FLOAT", str("nope"), num(1)),
    seed: variables,
    error: 'UPDATE_STUDY_VARIABLE_FLOAT: variable "nope" not found',
  },
  {
    title: "UPDATE_STUDY_VARIABLE_STRING",
    action: call("UPDATE_STUDY_VARIABLE_STRING", str("label"), str("y")),
    seed: variables,
    expect: (_r, s) => expect(variable(s, "label")).toBe("y"),
  },
  {
    title: "UPDATE_STUDY_VARIABLE_STRING declared type differs",
    action: call("UPDATE_STUDY_VARIABLE_STRING", str("open"), str("y")),
    seed: variables,
    error: 'is declared "boolean", not "string"',
  },
  {
    title: "UPDATE_STUDY_VARIABLE_DATE",
    action: call("UPDATE_STUDY_VARIABLE_DATE", str("start"), exp("timestampWithOffset", num(60))),
    seed: variables,
    expect: (_r, s) => expect(variable(s, "start")).toBe(NOW + 60),
  },
  {
    title: "UPDATE_STUDY_VARIABLE_DATE non-number value",
    action: call("UPDATE_STUDY_VARIABLE_DATE", str("start"), exp("externalEventEval", str("svc"))),
    seed: { ...variables, ...externalValue("x") },
    error: "UPDATE_STUDY_VARIABLE_DATE: could not parse value",
  },
];

const families: Record<string, Case[]> = {
  control: controlCases,
  participant: participantCases,
  survey: surveyCases,
  message: messageCases,
  report: reportCases,
  "confidential responses": confidentialCases,
  external: externalCases,
  "study codes": studyCodeCases,
  "study counters": counterCases,
  "study variables": variableCases,
};

describe.each(Object.entries(families))("%s actions", (_family, cases) => {
  it.each(cases)("$title", async (c) => {
    const services = c.services ? undefined : createInMemoryServices(c.seed ?? {});
    const state = participant(c.state ?? {});
    const before = snapshotOf(state);
    const result = await applyAction(c.action, state, event(c.event ?? {}), environment({}, c.services ?? services));
    if (c.error === undefined) expect(result.error).toBeUndefined();
    else if (typeof c.error === "string") expect(result.error?.message).toContain(c.error);
    else expect(result.error?.message).toMatch(c.error);
    expect(state).toEqual(before);
    c.expect?.(result, services);
  });
});

describe("action coverage", () => {
  const all = Object.values(families).flat();
  const uses = (c: Case, name: string): boolean => JSON.stringify(c.action).includes(`"name":"${name}"`);
  it("has a succeeding and a failing case for each of the 35 actions", () => {
    expect(actionNames).toHaveLength(35);
    const missing = actionNames.filter(
      (name) =>
        !all.some((c) => uses(c, name) && c.error === undefined) ||
        !all.some((c) => c.action.name === name && c.error !== undefined),
    );
    expect(missing).toEqual([]);
  });
});
