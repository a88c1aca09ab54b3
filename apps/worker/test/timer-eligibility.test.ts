// Which rule sets get timer ticks: the engine's rulesHandleEvent(rules, "TIMER"), checked against
// what the engine itself does when it runs the rules on a TIMER event. (Kept with the timer's
// tests; it belongs beside packages/engine/src/event-handling.ts once that folder takes tests.)
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyRules,
  compileRules,
  createDeterministicEnv,
  rulesHandleEvent,
  type Expression,
  type ExpressionArg,
  type ParticipantState,
} from "@studyflow/engine";
import { call, exp, num, onEvent, str } from "@studyflow/testkit";
import { anyState, ruleSets } from "../../../packages/engine/test/arbitraries";

const setFlag = call("UPDATE_FLAG", str("f"), str("1"));
const isType = (type: string) => exp(call("checkEventType", str(type)));

const cases: [string, Expression[], boolean][] = [
  ["no rules", [], false],
  ["IFTHEN on TIMER", [onEvent("TIMER", setFlag)], true],
  ["IFTHEN on ENTER and CUSTOM only", [onEvent("ENTER", setFlag), onEvent("CUSTOM", setFlag)], false],
  ["an action at the top level", [setFlag], true],
  [
    "a condition on the participant, not the event",
    [call("IFTHEN", exp(call("hasStudyStatus", str("active"))), exp(setFlag))],
    true,
  ],
  ["IFTHEN on TIMER without actions", [call("IFTHEN", isType("TIMER"))], false],
  [
    "and(ENTER, …) can never hold",
    [call("IFTHEN", exp(call("and", isType("ENTER"), exp(call("hasStudyStatus", str("a"))))), exp(setFlag))],
    false,
  ],
  [
    "and(TIMER, participant check) may hold",
    [call("IFTHEN", exp(call("and", isType("TIMER"), exp(call("hasStudyStatus", str("a"))))), exp(setFlag))],
    true,
  ],
  ["or(ENTER, SUBMIT)", [call("IFTHEN", exp(call("or", isType("ENTER"), isType("SUBMIT"))), exp(setFlag))], false],
  ["or(ENTER, TIMER)", [call("IFTHEN", exp(call("or", isType("ENTER"), isType("TIMER"))), exp(setFlag))], true],
  ["not(checkEventType(TIMER))", [call("IFTHEN", exp(call("not", isType("TIMER"))), exp(setFlag))], false],
  ["not(checkEventType(ENTER))", [call("IFTHEN", exp(call("not", isType("ENTER"))), exp(setFlag))], true],
  ["IF on ENTER with an else branch", [call("IF", isType("ENTER"), exp(setFlag), exp(setFlag))], true],
  ["IF on ENTER without else", [call("IF", isType("ENTER"), exp(setFlag))], false],
  ["IF on TIMER whose then is inert", [call("IF", isType("TIMER"), exp(call("DO")), exp(setFlag))], false],
  ["DO of guarded rules", [call("DO", exp(onEvent("ENTER", setFlag)), exp(onEvent("TIMER", setFlag)))], true],
  ["a literal 0 condition", [call("IFTHEN", num(0), exp(setFlag))], false],
  ["a literal 1 condition", [call("IFTHEN", num(1), exp(setFlag))], true],
  ["the event type in lower case is another type", [onEvent("timer", setFlag)], false],
  [
    "nested: IFTHEN on SUBMIT holding an IFTHEN on TIMER",
    [call("IFTHEN", isType("SUBMIT"), exp(onEvent("TIMER", setFlag)))],
    false,
  ],
];

const participant: ParticipantState = {
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
};

describe("rulesHandleEvent: the rule sets that get timer ticks", () => {
  it.each(cases)("%s", async (_name, rules, handles) => {
    expect(rulesHandleEvent(rules, "TIMER")).toBe(handles);
    // Never too small: a rule set said not to handle TIMER does nothing on a TIMER event.
    if (!handles) {
      const result = await applyRules(
        compileRules(rules),
        participant,
        { type: "TIMER", studyKey: "s" },
        createDeterministicEnv({}),
        { onRuleError: "continue" },
      );
      expect(result.changedPerRule.some(Boolean)).toBe(false);
      expect(result.errors ?? []).toEqual([]);
      expect(result.reports).toEqual([]);
    }
  });

  it("is never too small: generated rule sets said not to handle TIMER do nothing on one", async () => {
    const eventTypes = ["ENTER", "SUBMIT", "LEAVE", "MERGE", "CUSTOM", "TIMER", "timer"];
    // Conditions built from event-type checks, and/or/not and literals, around generated actions.
    const condition: fc.Arbitrary<ExpressionArg> = fc.letrec<{ c: ExpressionArg }>((tie) => ({
      c: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        {
          weight: 3,
          arbitrary: fc.constantFrom(...eventTypes).map((type) => exp(call("checkEventType", str(type)))),
        },
        { weight: 1, arbitrary: fc.constantFrom(num(0), num(1), str("x")) },
        { weight: 1, arbitrary: fc.constant(exp(call("hasStudyStatus", str("active")))) },
        { weight: 1, arbitrary: tie("c").map((inner) => exp(call("not", inner))) },
        {
          weight: 1,
          arbitrary: fc.array(tie("c"), { minLength: 2, maxLength: 3 }).map((args) => exp(call("and", ...args))),
        },
        {
          weight: 1,
          arbitrary: fc.array(tie("c"), { minLength: 2, maxLength: 3 }).map((args) => exp(call("or", ...args))),
        },
      ),
    })).c;
    const guarded: fc.Arbitrary<Expression> = fc.oneof(
      fc.tuple(condition, ruleSets).map(([cond, actions]) => call("IFTHEN", cond, ...actions.map(exp))),
      fc
        .tuple(condition, ruleSets, fc.option(ruleSets, { nil: undefined }))
        .map(([cond, then, otherwise]) =>
          call(
            "IF",
            cond,
            exp(call("DO", ...then.map(exp))),
            ...(otherwise ? [exp(call("DO", ...otherwise.map(exp)))] : []),
          ),
        ),
    );
    let inert = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(guarded, { minLength: 1, maxLength: 2 }), anyState, async (rules, state) => {
        if (rulesHandleEvent(rules, "TIMER")) return;
        inert += 1;
        const result = await applyRules(
          compileRules(rules),
          state,
          { type: "TIMER", studyKey: "s" },
          createDeterministicEnv({}),
          { onRuleError: "continue" },
        );
        expect(result.changedPerRule.some(Boolean)).toBe(false);
        expect(result.errors ?? []).toEqual([]);
        expect(result.skippedActions ?? []).toEqual([]);
        expect(result.reports).toEqual([]);
        expect(result.effects).toEqual([]);
      }),
      { numRuns: 400 },
    );
    // the property said something: a good share of the sets were inert
    expect(inert).toBeGreaterThan(50);
  });

  it("answers for any event type", () => {
    expect(rulesHandleEvent([onEvent("ENTER", setFlag)], "ENTER")).toBe(true);
    expect(rulesHandleEvent([onEvent("ENTER", setFlag)], "SUBMIT")).toBe(false);
  });
});
