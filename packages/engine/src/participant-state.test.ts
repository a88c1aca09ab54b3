import { describe, expect, it } from "vitest";
import { normalizeParticipantState, participantStateProblem, statesEqual, workingState } from "./participant-state";
import type { ParticipantState } from "./types";

const base = normalizeParticipantState({ participantId: "p1" });

describe("normalizeParticipantState", () => {
  it("fills defaults", () => {
    expect(base).toEqual({
      participantId: "p1",
      currentStudySession: "",
      enteredAt: 0,
      modifiedAt: 0,
      studyStatus: "active",
      flags: {},
      linkingCodes: {},
      assignedSurveys: [],
      lastSubmissions: {},
      messages: [],
    });
  });

  it("keeps good entries, converts scalar flags to text, drops the rest", () => {
    const input = {
      participantId: "p1",
      flags: { a: "x", b: 1, c: true, d: null },
      lastSubmissions: { s: 5, t: "6" },
      assignedSurveys: [{ surveyKey: "s", validFrom: 1 }, null],
      messages: [{ type: "m" }],
    } as unknown as ParticipantState;
    const state = normalizeParticipantState(input);
    expect(state.flags).toEqual({ a: "x", b: "1", c: "true" });
    expect(state.lastSubmissions).toEqual({ s: 5 });
    expect(state.assignedSurveys).toEqual([{ surveyKey: "s", validFrom: 1, validUntil: 0, category: "" }]);
    expect(state.messages).toEqual([{ id: "", type: "m", scheduledFor: 0 }]);
  });

  it("workingState uses a well-formed state as it is", () => {
    expect(workingState(base)).toBe(base);
    expect(workingState({ participantId: "p1", flags: null })).toEqual(base);
    expect(workingState("nonsense")).toEqual({ ...base, participantId: "" });
  });
});

describe("statesEqual", () => {
  it("treats absent, null and empty containers alike and ignores key order", () => {
    const sparse = { ...base, flags: null, messages: undefined } as unknown as ParticipantState;
    expect(statesEqual(base, sparse)).toBe(true);
    const a = { ...base, flags: { x: "1", y: "2" } };
    const b = { ...base, flags: { y: "2", x: "1" } };
    expect(statesEqual(a, b)).toBe(true);
  });

  it("reads a missing optional survey field as empty", () => {
    const a = {
      ...base,
      assignedSurveys: [{ surveyKey: "s", validFrom: 0, validUntil: 0, category: "", studyKey: "" }],
    };
    const b = { ...base, assignedSurveys: [{ surveyKey: "s", validFrom: 0, validUntil: 0, category: "" }] };
    expect(statesEqual(a, b)).toBe(true);
  });

  it.each<[string, Partial<ParticipantState> & Record<string, unknown>]>([
    ["status", { studyStatus: "exited" }],
    ["flag value", { flags: { a: "2" } }],
    ["extra flag", { flags: { a: "1", b: "1" } }],
    [
      "survey order",
      {
        assignedSurveys: [
          { surveyKey: "t", validFrom: 0, validUntil: 0, category: "" },
          { surveyKey: "s", validFrom: 0, validUntil: 0, category: "" },
        ],
      },
    ],
    ["submission", { lastSubmissions: { s: 2 } }],
    ["unknown field", { hashedAccountID: "h" }],
  ])("sees a different %s", (_what, patch) => {
    const a = {
      ...base,
      flags: { a: "1" },
      lastSubmissions: { s: 1 },
      assignedSurveys: [
        { surveyKey: "s", validFrom: 0, validUntil: 0, category: "" },
        { surveyKey: "t", validFrom: 0, validUntil: 0, category: "" },
      ],
    };
    expect(statesEqual(a, { ...a, ...patch })).toBe(false);
  });
});

describe("participantStateProblem", () => {
  it("accepts partial states with the right types", () => {
    expect(participantStateProblem({ flags: { a: "b" }, studyStatus: "x", assignedSurveys: null })).toBeNull();
  });
  it("names the first wrong field", () => {
    expect(participantStateProblem({ messages: [{ type: 1 }] })).toBe("field messages has the wrong type");
    expect(participantStateProblem([])).toBe("not an object");
  });
});
