import { describe, expect, it } from "vitest";
import type { ExpressionArg, ParticipantField } from "../src/index";
import { PARTICIPANT_FIELDS, actionNames, expressionNames, fieldsUsedBy } from "../src/index";
import { actionFamily, expressionFamily } from "../src/function-spec";
import { actionSpecs, expressionSpecs } from "../src/registry";
import { call, exp, str } from "./builders";

const CUSTOM = { eventType: "CUSTOM" } as const;
const JSON_FIELDS: readonly ParticipantField[] = [
  "flags",
  "linkingCodes",
  "assignedSurveys",
  "lastSubmissions",
  "messages",
];

const rule = (name: string, ...data: ExpressionArg[]) => call(name, ...data);
const used = (rules: readonly unknown[], options: Parameters<typeof fieldsUsedBy>[1] = CUSTOM) =>
  [...fieldsUsedBy(rules, options)].sort();
const jsonFieldsIn = (fields: readonly ParticipantField[]) => fields.filter((f) => JSON_FIELDS.includes(f));

describe("fieldsUsedBy", () => {
  it("finds the fields a rule set reads or writes through any nesting", () => {
    const rules = [
      rule("IFTHEN", exp("hasParticipantFlag", str("group"), str("g0")), exp("UPDATE_FLAG", str("bulk"), str("x"))),
      rule(
        "IF",
        exp("not", exp("hasSurveyKeyAssigned", str("weekly"))),
        exp("DO", exp("ADD_MESSAGE", str("t"), exp("timestampWithOffset"))),
      ),
    ];
    expect(used(rules)).toEqual(["assignedSurveys", "flags", "messages"]);
  });

  it("needs no JSON field for rules on status, events and reports", () => {
    const rules = [rule("IFTHEN", exp("hasStudyStatus", str("exited")), exp("INIT_REPORT", str("r")))];
    expect(used(rules)).toEqual(["participantId", "studyStatus"]);
    expect(jsonFieldsIn(used(rules))).toEqual([]);
  });

  it("uses everything for external services, which see and may replace the whole state", () => {
    expect(used([rule("EXTERNAL_EVENT_HANDLER", str("svc"))])).toEqual([...PARTICIPANT_FIELDS].sort());
    expect(used([rule("IFTHEN", exp("eq", exp("externalEventEval", str("svc")), str("x")))])).toEqual(
      [...PARTICIPANT_FIELDS].sort(),
    );
  });

  it("uses everything for a name the registry does not know, or a node without a name", () => {
    expect(used([rule("IFTHEN", exp("hasParticipantFlagg", str("a"), str("b")))])).toEqual(
      [...PARTICIPANT_FIELDS].sort(),
    );
    expect(used([{ data: [] }])).toEqual([...PARTICIPANT_FIELDS].sort());
  });

  it("knows every name of the engine: only the external functions use everything", () => {
    const loadsAll = new Set(["EXTERNAL_EVENT_HANDLER", "externalEventEval"]);
    for (const name of [...expressionNames, ...actionNames]) {
      const fields = fieldsUsedBy([rule(name)], CUSTOM);
      if (loadsAll.has(name)) expect(fields.size, name).toBe(PARTICIPANT_FIELDS.length);
      else expect(jsonFieldsIn([...fields]).length, name).toBeLessThan(JSON_FIELDS.length);
    }
  });

  it.each<[string, ParticipantField[]]>([
    ["hasParticipantFlag", ["flags"]],
    ["hasParticipantFlagKey", ["flags"]],
    ["getParticipantFlagValue", ["flags"]],
    ["UPDATE_FLAG", ["flags"]],
    ["REMOVE_FLAG", ["flags"]],
    ["GET_NEXT_STUDY_COUNTER_AS_FLAG", ["flags"]],
    ["hasLinkingCode", ["linkingCodes"]],
    ["getLinkingCodeValue", ["linkingCodes"]],
    ["SET_LINKING_CODE", ["linkingCodes"]],
    ["DELETE_LINKING_CODE", ["linkingCodes"]],
    ["DRAW_STUDY_CODE_AS_LINKING_CODE", ["linkingCodes"]],
    ["GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE", ["linkingCodes"]],
    ["SEND_MESSAGE_NOW", ["flags", "linkingCodes"]],
    ["hasSurveyKeyAssigned", ["assignedSurveys"]],
    ["getSurveyKeyAssignedFrom", ["assignedSurveys"]],
    ["getSurveyKeyAssignedUntil", ["assignedSurveys"]],
    ["ADD_NEW_SURVEY", ["assignedSurveys"]],
    ["REMOVE_ALL_SURVEYS", ["assignedSurveys"]],
    ["REMOVE_SURVEY_BY_KEY", ["assignedSurveys"]],
    ["REMOVE_SURVEYS_BY_KEY", ["assignedSurveys"]],
    ["getLastSubmissionDate", ["lastSubmissions"]],
    ["lastSubmissionDateOlderThan", ["lastSubmissions"]],
    ["hasMessageTypeAssigned", ["messages"]],
    ["getMessageNextTime", ["messages"]],
    ["ADD_MESSAGE", ["messages"]],
    ["REMOVE_ALL_MESSAGES", ["messages"]],
    ["REMOVE_MESSAGES_BY_TYPE", ["messages"]],
  ])("%s uses %j", (name, fields) => {
    expect(used([rule(name)])).toEqual([...fields].sort());
  });

  it.each<[string, ParticipantField[]]>([
    ["getStudyEntryTime", ["enteredAt"]],
    ["hasStudyStatus", ["studyStatus"]],
    ["getCurrentStudySession", ["currentStudySession"]],
    ["UPDATE_STUDY_STATUS", ["studyStatus"]],
    ["START_NEW_STUDY_SESSION", ["currentStudySession"]],
    ["NOTIFY_RESEARCHER", ["participantId"]],
    ["INIT_REPORT", ["participantId"]],
    ["UPDATE_REPORT_DATA", ["participantId"]],
    ["checkConditionForOldResponses", ["participantId"]],
  ])("%s uses the scalar fields %j", (name, fields) => {
    expect(used([rule(name)])).toEqual(fields);
  });

  it("counts what the condition of checkConditionForOldResponses reads, and its participant id", () => {
    const rules = [
      rule(
        "IFTHEN",
        exp("checkConditionForOldResponses", exp("hasParticipantFlagKey", str("a")), str("any")),
        exp("REMOVE_REPORT_DATA", str("r"), str("k")),
      ),
    ];
    expect(used(rules)).toEqual(["flags", "participantId"]);
  });

  it("never counts the incomingState: readers, which read the participant being merged in", () => {
    const incoming = expressionNames.filter((name) => name.startsWith("incomingState:"));
    expect(incoming.length).toBe(15);
    for (const name of incoming) expect(used([rule(name)]), name).toEqual([]);
  });

  it("counts the lastSubmissions record of SUBMIT events, also when the event type is not known", () => {
    const rules = [rule("IFTHEN", exp("checkEventType", str("SUBMIT")), exp("INIT_REPORT", str("r")))];
    expect(used(rules, { eventType: "SUBMIT" })).toEqual(["lastSubmissions", "participantId"]);
    expect(used(rules, {})).toEqual(["lastSubmissions", "participantId"]);
    expect(used(rules, { eventType: "TIMER" })).toEqual(["participantId"]);
    expect(used([], {})).toEqual([]);
  });
});

describe("the registry's participant field declarations", () => {
  it("exist for every registered name and name only fields of the participant state", () => {
    const specs = [...expressionSpecs, ...actionSpecs];
    expect(specs.length).toBe(expressionNames.length + actionNames.length);
    for (const spec of specs) {
      const usage = spec.participantFields as unknown;
      expect(usage, spec.name).toBeTypeOf("object");
      const { reads, writes } = usage as { reads: unknown; writes: unknown };
      for (const list of [reads, writes]) {
        if (list === "all") continue;
        expect(Array.isArray(list), spec.name).toBe(true);
        for (const field of list as unknown[]) expect(PARTICIPANT_FIELDS, spec.name).toContain(field);
      }
    }
  });

  it("let no expression write", () => {
    for (const spec of expressionSpecs) expect(spec.participantFields.writes, spec.name).toEqual([]);
  });

  it("are required by the family builders", () => {
    // Compile-time checks: the lines below must not type-check.
    // @ts-expect-error participantFields is missing
    expressionFamily("test", [{ name: "x", summary: "", returns: "bool", evaluate: () => true }]);
    // @ts-expect-error participantFields is missing
    actionFamily("test", [{ name: "X", summary: "", perform: () => true }]);
    // @ts-expect-error a field the participant state does not have
    actionFamily("test", [{ name: "X", summary: "", participantFields: { reads: ["flag"], writes: [] } }]);
  });
});
