// Text the engine writes must be storable: a NUL character or a lone UTF-16 surrogate computed at
// run time (a response value, an event payload, an external reply) fails the action that would
// write it, with a message saying where, and changes nothing.
import { describe, expect, it } from "vitest";
import { applyRules, compileRules, type SurveyResponse } from "../src/index";
import { firstTextProblem, textProblem } from "../src/text-values";
import { call, environment, event, exp, participant, str } from "./builders";

const submit = (value: string) => {
  const response: SurveyResponse = {
    key: "intake",
    responses: [{ key: "intake.Q1", response: { key: "rg", items: [{ key: "txt", value }] } }],
  };
  return event({ type: "SUBMIT", response, participantIDForConfidentialResponses: "c1" });
};
const answer = exp("getResponseValueAsStr", str("intake.Q1"), str("rg.txt"));

describe("text the engine writes", () => {
  it("recognises NUL and lone surrogates, and well-formed text including pairs", () => {
    expect(textProblem("a\u0000b")).toBe("contains a NUL character (U+0000)");
    expect(textProblem("\ud800")).toBe("contains a lone UTF-16 surrogate");
    expect(textProblem("x\udfff")).toBe("contains a lone UTF-16 surrogate");
    expect(textProblem("emoji 😀 and ü")).toBeNull();
    expect(firstTextProblem({ a: [{ b: "ok" }, { c: "\u0000" }] }, "reply")).toBe(
      "reply.a[1].c contains a NUL character (U+0000)",
    );
    expect(firstTextProblem({ "k\ud800": 1 }, "reply")).toBe("a key of reply contains a lone UTF-16 surrogate");
  });

  it.each([
    ["a flag value", call("UPDATE_FLAG", str("note"), answer), /UPDATE_FLAG: flags\.note contains a NUL/],
    ["a flag key", call("UPDATE_FLAG", answer, str("x")), /UPDATE_FLAG: a key of flags contains a NUL/],
    ["a linking code", call("SET_LINKING_CODE", str("code"), answer), /linkingCodes\.code contains a NUL/],
    ["the study status", call("UPDATE_STUDY_STATUS", answer), /UPDATE_STUDY_STATUS: studyStatus contains a NUL/],
    ["a survey key", call("ADD_NEW_SURVEY", answer, str("0"), str("0"), str("c")), /assignedSurveys.*contains a NUL/],
    ["a report value", call("UPDATE_REPORT_DATA", str("r"), str("note"), answer), /report\.value contains a NUL/],
    ["a message type", call("SEND_MESSAGE_NOW", answer), /message\.messageType contains a NUL/],
  ])("fails the action that would write %s, leaving the state as it was", async (_title, action, message) => {
    const before = participant({ flags: { kept: "yes" } });
    const result = await applyRules(compileRules([action]), before, submit("bad\u0000value"), environment());
    expect(result.error?.message).toMatch(message);
    expect(result.state.flags).toEqual({ kept: "yes" });
    expect(result.state.studyStatus).toBe(before.studyStatus);
    expect(result.reports).toEqual([]);
    expect(result.effects).toEqual([]);
  });

  it("a lone surrogate in a response value is refused the same way", async () => {
    const result = await applyRules(
      compileRules([call("UPDATE_FLAG", str("note"), answer)]),
      participant(),
      submit("half \ud83d"),
      environment(),
    );
    expect(result.error?.message).toMatch(/flags\.note contains a lone UTF-16 surrogate/);
  });

  it("an external reply whose state or reports hold such text changes nothing", async () => {
    const env = environment({
      externalServices: {
        registry: () => ({ pState: { participantId: "p1", flags: { x: "nul\u0000" } } }),
      },
    });
    const result = await applyRules(
      compileRules([call("EXTERNAL_EVENT_HANDLER", str("registry"))]),
      participant({ participantId: "p1", flags: { kept: "yes" } }),
      event(),
      env,
    );
    expect(result.error?.message).toMatch(/reply\.pState\.flags\.x contains a NUL/);
    expect(result.state.flags).toEqual({ kept: "yes" });
  });
});
