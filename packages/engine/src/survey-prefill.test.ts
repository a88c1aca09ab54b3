import { describe, expect, it } from "vitest";
import { createDeterministicEnv, createInMemoryServices } from "./in-memory-services";
import { readOnlyServices } from "./read-only-services";
import { resolveSurveyContext } from "./survey-context";
import { dropPrefillsMissingFromSurvey, formatGoFloat, resolvePrefillRules, surveyHasItem } from "./survey-prefill";
import type { Expression, SurveyResponse } from "./types";
import { EMPTY_PARTICIPANT } from "./participant-state";

const NOW_S = 1_780_000_000;
const str = (value: string) => ({ dtype: "str", str: value });
const num = (value: number) => ({ dtype: "num", num: value });
const exp = (name: string, ...data: object[]) => ({ dtype: "exp", exp: { name, data } });
const slot = (item: string, slotKey: string, value: object): Expression => ({
  name: "PREFILL_SLOT_WITH_VALUE",
  data: [str(item), str(slotKey), value],
});
const last = (item: string, ...filter: object[]): Expression => ({
  name: "PREFILL_ITEM_WITH_LAST_RESPONSE",
  data: [str(item), ...filter],
});

const answer = (key: string, choice: string) => ({
  key,
  response: { key: "rg", items: [{ key: "scg", items: [{ key: choice }] }] },
});

function envWith(oldResponses: (SurveyResponse & { participantId: string })[] = []) {
  return createDeterministicEnv({ now: NOW_S * 1000, services: createInMemoryServices({ oldResponses }) });
}

describe("resolvePrefillRules", () => {
  it("no rules: no prefill at all (case-backend leaves the field out)", async () => {
    expect(await resolvePrefillRules(undefined, "p", envWith())).toEqual({ prefill: null, problems: [] });
    expect(await resolvePrefillRules([], "p", envWith())).toEqual({ prefill: null, problems: [] });
  });

  it("PREFILL_SLOT_WITH_VALUE builds the slot path, merges rules on one item, numbers as Go's %f", async () => {
    const outcome = await resolvePrefillRules(
      [
        slot("s.Q1", "rg.scg.2", str("")),
        slot("s.Q1", "rg.txt", str("hello")),
        slot("s.Q2", "rg.num", num(3)),
        slot("s.Q3", "rg", str("top")),
      ],
      "p",
      envWith(),
    );
    expect(outcome.problems).toEqual([]);
    expect(outcome.prefill).toEqual({
      responses: [
        {
          key: "s.Q1",
          response: {
            key: "rg",
            items: [
              { key: "scg", items: [{ key: "2", value: "" }] },
              { key: "txt", value: "hello" },
            ],
          },
        },
        { key: "s.Q2", response: { key: "rg", items: [{ key: "num", dtype: "number", value: "3.000000" }] } },
        { key: "s.Q3", response: { key: "rg", value: "top" } },
      ],
    });
  });

  it("PREFILL_ITEM_WITH_LAST_RESPONSE copies the item of the newest response, within the time filter", async () => {
    const env = envWith([
      { key: "s", participantId: "p", arrivedAt: NOW_S - 10 * 86400, responses: [answer("s.Q1", "old")] },
      {
        key: "s",
        participantId: "p",
        arrivedAt: NOW_S - 3600,
        responses: [answer("s.Q1", "new"), answer("s.Q2", "x")],
      },
      { key: "s", participantId: "other", arrivedAt: NOW_S, responses: [answer("s.Q1", "theirs")] },
    ]);
    const plain = await resolvePrefillRules([last("s.Q1")], "p", env);
    expect(plain.prefill).toEqual({ responses: [answer("s.Q1", "new")] });

    const withinDay = await resolvePrefillRules([last("s.Q1", exp("timestampWithOffset", num(-86400)))], "p", env);
    expect(withinDay.prefill).toEqual({ responses: [answer("s.Q1", "new")] });

    const withinMinute = await resolvePrefillRules([last("s.Q1", exp("timestampWithOffset", num(-60)))], "p", env);
    expect(withinMinute).toEqual({ prefill: { responses: [] }, problems: [] });

    const sinceNumber = await resolvePrefillRules([last("s.Q1", num(NOW_S - 3600))], "p", env);
    expect(sinceNumber.prefill).toEqual({ responses: [] }); // arrivedAt must be later, not equal
  });

  it("a filter per rule: two rules on one survey with different filters each get their own response", async () => {
    const env = envWith([
      { key: "s", participantId: "p", arrivedAt: NOW_S - 10 * 86400, responses: [answer("s.Q1", "old")] },
    ]);
    const outcome = await resolvePrefillRules(
      [last("s.Q1", exp("timestampWithOffset", num(-30 * 86400))), last("s.Q1", exp("timestampWithOffset", num(-60)))],
      "p",
      env,
    );
    expect(outcome.prefill).toEqual({ responses: [answer("s.Q1", "old")] });
  });

  it("without a participant the last-response rules give nothing, the constant ones still apply", async () => {
    const env = envWith([{ key: "s", participantId: "", arrivedAt: NOW_S, responses: [answer("s.Q1", "x")] }]);
    const outcome = await resolvePrefillRules([last("s.Q1"), slot("s.Q2", "rg", str("v"))], "", env);
    expect(outcome).toEqual({
      prefill: { responses: [{ key: "s.Q2", response: { key: "rg", value: "v" } }] },
      problems: [],
    });
  });

  it("skips and reports what it cannot apply, instead of failing the survey", async () => {
    const outcome = await resolvePrefillRules(
      [
        { name: "PREFILL_SOMETHING_ELSE", data: [] },
        { name: "PREFILL_SLOT_WITH_VALUE", data: [str("s.Q1"), str("rg")] },
        last("s.Q1", str("yesterday")),
        last("s.Q1", exp("noSuchFunction")),
        last("s.Q1", exp("getParticipantFlagValue", str("since"))),
        "junk",
      ],
      "p",
      envWith(),
    );
    expect(outcome.prefill).toEqual({ responses: [] });
    expect(outcome.problems.map((problem) => problem.path)).toEqual([
      "prefillRules[0]",
      "prefillRules[1]",
      "prefillRules[2]",
      "prefillRules[3]",
      "prefillRules[4]",
      "prefillRules[5]",
    ]);
    expect(outcome.problems[0]?.message).toContain('unknown prefill rule "PREFILL_SOMETHING_ELSE"');
    expect(outcome.problems[2]?.message).toContain("time filter is not a number");
  });

  it("formats numbers as Go's %f", () => {
    expect(formatGoFloat(3)).toBe("3.000000");
    expect(formatGoFloat(-0.5)).toBe("-0.500000");
    expect(formatGoFloat(1e21)).toBe("1000000000000000000000.000000");
  });
});

describe("dropPrefillsMissingFromSurvey", () => {
  const definition = {
    key: "s",
    items: [{ key: "s.Q1" }, { key: "s.G1", items: [{ key: "s.G1.Q2" }] }],
  };

  it("keeps items the definition has, at any depth, and drops the others", () => {
    expect(surveyHasItem(definition, "s.G1.Q2")).toBe(true);
    expect(surveyHasItem(definition, "s.G1.Q3")).toBe(false);
    const kept = dropPrefillsMissingFromSurvey(
      { responses: [answer("s.Q1", "1"), answer("s.Q9", "1"), answer("s.G1.Q2", "1"), answer("other.Q1", "1")] },
      definition,
    );
    expect(kept.responses.map((item) => item.key)).toEqual(["s.Q1", "s.G1.Q2"]);
  });
});

describe("resolveSurveyContext", () => {
  const state = { ...EMPTY_PARTICIPANT, participantId: "p", flags: { group: "b" } };
  const variables = [{ key: "season", type: "string" as const, value: "2026" }];

  it("always gives flags and variables; the mode from a string argument", async () => {
    const input = { state, studyKey: "s", variables };
    expect(await resolveSurveyContext(undefined, input, envWith())).toEqual({
      context: { participantFlags: { group: "b" }, studyVariables: variables },
      problems: [],
    });
    const withMode = await resolveSurveyContext({ mode: { str: "followup" } }, input, envWith());
    expect(withMode.context.mode).toBe("followup");
    const emptyMode = await resolveSurveyContext({ mode: { dtype: "str", str: "" } }, input, envWith());
    expect(emptyMode.context).not.toHaveProperty("mode");
  });

  it("a mode expression is evaluated for the participant; previousResponses are reported, not run", async () => {
    const outcome = await resolveSurveyContext(
      { mode: exp("getParticipantFlagValue", str("group")), previousResponses: [{ name: "x" }] },
      { state, studyKey: "s", variables: [] },
      envWith(),
    );
    expect(outcome.context.mode).toBe("b");
    expect(outcome.problems.map((problem) => problem.path)).toEqual(["contextRules.previousResponses"]);
  });
});

describe("readOnlyServices", () => {
  it("refuses every writing port and keeps the reads", async () => {
    const services = readOnlyServices(createInMemoryServices({ counters: { c: 2 }, codeLists: { l: ["x"] } }));
    expect(await services.getCounterValue("c")).toBe(2);
    await expect(services.incrementCounter("c")).rejects.toThrow("only reads");
    await expect(services.drawCode("l")).rejects.toThrow("only reads");
    await expect(services.updateStudyVariable("v", "int", 1)).rejects.toThrow("only reads");
    await expect(services.callExternalService("s", "/", {})).rejects.toThrow("only reads");
    expect(await services.isCodePresent("l", "x")).toBe(true);
  });
});
