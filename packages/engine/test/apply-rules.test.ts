// applyRules, applyAction and evaluateExpression as callers use them: policies, bookkeeping,
// immutability, async ports, error reporting.
import { describe, expect, it } from "vitest";
import type { EngineServices, ParticipantState } from "../src/index";
import {
  RuleValidationError,
  applyAction,
  applyRules,
  compileRules,
  createInMemoryServices,
  evaluateExpression,
  normalizeParticipantState,
} from "../src/index";
import { NOW, call, environment, event, exp, num, participant, snapshotOf, str } from "./builders";

const onEvent = (type: string, ...actions: ReturnType<typeof exp>[]) =>
  call("IFTHEN", exp("checkEventType", str(type)), ...actions);
const setFlag = (key: string, value: string) => exp("UPDATE_FLAG", str(key), str(value));
const failing = exp("getResponseValueAsStr", str("missing"), str("rg"));

describe("applyRules", () => {
  it("threads the state through the rules and reports per-rule changes", async () => {
    const rules = compileRules([
      onEvent("CUSTOM", setFlag("a", "1")),
      call("IFTHEN", exp("hasParticipantFlag", str("a"), str("1")), setFlag("b", "2")),
      onEvent("SUBMIT", setFlag("c", "3")),
      onEvent("CUSTOM", setFlag("a", "1")),
    ]);
    const result = await applyRules(rules, participant(), event(), environment());
    expect(result.state.flags).toEqual({ a: "1", b: "2" });
    expect(result.changedPerRule).toEqual([true, true, false, false]);
    expect(result.error).toBeUndefined();
  });

  it("counts only semantic changes: clearing absent linking codes is no change", async () => {
    const rules = compileRules([call("DELETE_LINKING_CODE"), call("REMOVE_SURVEYS_BY_KEY", str("none"))]);
    const state = { ...participant(), linkingCodes: null } as unknown as ParticipantState;
    const result = await applyRules(rules, state, event(), environment());
    expect(result.changedPerRule).toEqual([false, false]);
  });

  it("stops at the first failing rule and keeps what came before it", async () => {
    const rules = compileRules([
      call("DO", setFlag("a", "1"), exp("INIT_REPORT", str("r"))),
      call("DO", setFlag("b", "2"), exp("NOTIFY_RESEARCHER", str("n")), exp("UPDATE_FLAG", str("c"), failing)),
      call("UPDATE_FLAG", str("d"), str("4")),
    ]);
    const result = await applyRules(rules, participant(), event(), environment());
    expect(result.error).toEqual({
      ruleIndex: 1,
      path: "rules[1].data[2].exp.data[1].exp",
      message: "rule 1: UPDATE_FLAG: item not found",
    });
    expect(result.state.flags).toEqual({ a: "1" });
    expect(result.reports.map((r) => r.key)).toEqual(["r"]);
    expect(result.effects).toEqual([]);
    expect(result.changedPerRule).toEqual([true, false, false]);
  });

  it('skips failing rules with the "continue" (TIMER) policy', async () => {
    const rules = compileRules([
      call("REMOVE_FLAG", failing),
      setFlagRule("b"),
      call("SET_LINKING_CODE", str("k"), failing),
    ]);
    const result = await applyRules(rules, participant(), event({ type: "TIMER" }), environment(), {
      onRuleError: "continue",
    });
    expect(result.state.flags).toEqual({ b: "1" });
    expect(result.error?.ruleIndex).toBe(0);
    expect(result.errors?.map((e) => e.ruleIndex)).toEqual([0, 2]);
    expect(result.changedPerRule).toEqual([false, true, false]);
  });

  it("never mutates the input state, however many writes a rule makes", async () => {
    const state = participant({
      flags: { x: "1" },
      assignedSurveys: [{ surveyKey: "s", validFrom: 0, validUntil: 0, category: "n" }],
    });
    const before = snapshotOf(state);
    const rules = compileRules([
      call(
        "DO",
        setFlag("a", "1"),
        setFlag("b", "1"),
        exp("REMOVE_FLAG", str("x")),
        exp("ADD_NEW_SURVEY", str("t"), num(0), num(0), str("n")),
      ),
      call(
        "DO",
        exp("REMOVE_SURVEYS_BY_KEY", str("s")),
        exp("ADD_MESSAGE", str("m"), num(1)),
        exp("UPDATE_STUDY_STATUS", str("done")),
      ),
    ]);
    const result = await applyRules(rules, state, event(), environment());
    expect(state).toEqual(before);
    expect(result.state).not.toBe(state);
    expect(result.state.flags).toEqual({ a: "1", b: "1" });
    expect(result.state.assignedSurveys.map((s) => s.surveyKey)).toEqual(["t"]);
  });

  it("keeps fields the engine does not know about", async () => {
    const state = { ...participant(), hashedAccountID: "h1" } as ParticipantState;
    const result = await applyRules(compileRules([setFlagRule("a")]), state, event(), environment());
    expect(result.state).toMatchObject({ hashedAccountID: "h1", flags: { a: "1" } });
  });

  it("normalizes incomplete states instead of failing", async () => {
    const state = { participantId: "p9", flags: null, assignedSurveys: null } as unknown as ParticipantState;
    const result = await applyRules(compileRules([setFlagRule("a")]), state, event(), environment());
    expect(result.error).toBeUndefined();
    expect(result.state).toEqual(normalizeParticipantState({ participantId: "p9", flags: { a: "1" } }));
  });

  it("mixes synchronous rules and rules that use a port", async () => {
    const rules = compileRules([
      setFlagRule("a"),
      call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("n")),
      setFlagRule("b"),
    ]);
    const services = createInMemoryServices();
    const env = environment({}, services);
    const first = await applyRules(rules, participant(), event(), env);
    const second = await applyRules(rules, participant(), event(), env);
    expect(first.state.flags).toEqual({ a: "1", n: "1", b: "1" });
    expect(second.state.flags["n"]).toBe("2");
  });

  it("evaluates participants concurrently without interference", async () => {
    const rules = compileRules([
      call(
        "IFTHEN",
        exp("isStudyCodePresent", str("list"), exp("getParticipantFlagValue", str("code"))),
        exp("UPDATE_FLAG", str("valid"), exp("getParticipantFlagValue", str("code"))),
      ),
    ]);
    const env = environment({ codeLists: { list: ["c1", "c3"] } });
    const results = await Promise.all(
      ["c1", "c2", "c3"].map((code, i) =>
        applyRules(rules, participant({ participantId: `p${i}`, flags: { code } }), event(), env),
      ),
    );
    expect(results.map((r) => r.state.flags["valid"])).toEqual(["c1", undefined, "c3"]);
  });

  it("turns a port that throws synchronously into a rule error", async () => {
    const services: EngineServices = {
      ...createInMemoryServices(),
      incrementCounter: () => {
        throw new Error("not even a promise");
      },
    };
    const result = await applyRules(
      compileRules([call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("n"))]),
      participant(),
      event(),
      environment({}, services),
    );
    expect(result.error?.message).toBe("rule 0: GET_NEXT_STUDY_COUNTER_AS_FLAG: not even a promise");
  });

  it("accepts a look-alike rule set object and reports an invalid one", async () => {
    const lookAlike = { ruleCount: 1, rules: [setFlagRule("a")] };
    expect((await applyRules(lookAlike, participant(), event(), environment())).state.flags).toEqual({ a: "1" });
    const invalid = await applyRules({ ruleCount: 1, rules: [call("NOPE")] }, participant(), event(), environment());
    expect(invalid.error?.message).toBe('rules[0].name: unknown action "NOPE"');
    expect(invalid.changedPerRule).toEqual([false]);
  });
});

function setFlagRule(key: string) {
  return call("UPDATE_FLAG", str(key), str("1"));
}

describe("SUBMIT bookkeeping", () => {
  const response = { key: "weekly", arrivedAt: NOW - 30 };

  it("records lastSubmissions before every action, nested ones included", async () => {
    const rules = compileRules([
      call("IFTHEN", exp("eq", exp("getLastSubmissionDate", str("weekly")), num(NOW - 30)), setFlag("seen", "yes")),
    ]);
    const result = await applyRules(
      rules,
      participant({ lastSubmissions: { other: 1 } }),
      event({ type: "SUBMIT", response }),
      environment(),
    );
    expect(result.state.lastSubmissions).toEqual({ other: 1, weekly: NOW - 30 });
    expect(result.state.flags).toEqual({ seen: "yes" });
  });

  it("uses now when arrivedAt is missing", async () => {
    const result = await applyRules(
      compileRules([call("DO")]),
      participant(),
      event({ type: "SUBMIT", response: { key: "weekly" } }),
      environment(),
    );
    expect(result.state.lastSubmissions).toEqual({ weekly: NOW });
  });

  it('fails with "no response key found" for an empty key, and only when a rule runs', async () => {
    const noKey = event({ type: "SUBMIT", response: { key: "" } });
    const failed = await applyRules(compileRules([call("DO")]), participant(), noKey, environment());
    expect(failed.error?.message).toBe("rule 0: DO: no response key found");
    const none = await applyRules(compileRules([]), participant(), noKey, environment());
    expect(none.error).toBeUndefined();
    expect(none.state.lastSubmissions).toEqual({});
  });
});

describe("compileRules", () => {
  it("throws RuleValidationError with every issue", () => {
    try {
      compileRules([call("NOPE"), call("REMOVE_FLAG")]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(RuleValidationError);
      expect((error as RuleValidationError).issues.map((i) => i.path)).toEqual(["rules[0].name", "rules[1].data"]);
    }
  });

  it("exposes the rules and their count", () => {
    const rules = [setFlagRule("a"), setFlagRule("b")];
    const compiled = compileRules(rules);
    expect(compiled.ruleCount).toBe(2);
    expect(compiled.rules).toEqual(rules);
  });
});

describe("applyAction and evaluateExpression", () => {
  it("applyAction validates first and returns an error result", async () => {
    const state = participant();
    const result = await applyAction(call("UPDATE_FLAG", str("a")), state, event(), environment());
    expect(result).toEqual({
      state,
      reports: [],
      effects: [],
      changedPerRule: [false],
      error: { ruleIndex: 0, path: "action", message: "action.data: UPDATE_FLAG takes exactly 2 arguments, got 1" },
      errors: [{ ruleIndex: 0, path: "action", message: "action.data: UPDATE_FLAG takes exactly 2 arguments, got 1" }],
    });
  });

  it("evaluateExpression validates first", async () => {
    const result = await evaluateExpression(call("nope"), participant(), event(), environment());
    expect(result).toEqual({ value: null, error: 'expression.name: unknown expression "nope"' });
  });

  it("incomingState expressions see an empty participant outside MERGE", async () => {
    const result = await evaluateExpression(
      call("incomingState:getStudyEntryTime"),
      participant(),
      event(),
      environment(),
    );
    expect(result).toEqual({ value: 0 });
  });

  it("a literal condition is true for num != 0 whatever its dtype, an expression only for boolean true", async () => {
    const literal = await applyAction(
      call("IF", { dtype: "str", str: "", num: 1 }, setFlag("a", "1")),
      participant(),
      event(),
      environment(),
    );
    expect(literal.state.flags).toEqual({ a: "1" });
    const numeric = await applyAction(
      call("IF", exp("getStudyEntryTime"), setFlag("a", "1")),
      participant(),
      event(),
      environment(),
    );
    expect(numeric.state.flags).toEqual({});
  });

  it("is deterministic with an injected clock and random source", async () => {
    const action = call(
      "DO",
      exp("START_NEW_STUDY_SESSION"),
      exp("UPDATE_FLAG", str("r"), exp("generateRandomNumber", num(1), num(1000))),
    );
    const a = await applyAction(action, participant(), event(), environment());
    const b = await applyAction(action, participant(), event(), environment());
    expect(a.state).toEqual(b.state);
  });
});
