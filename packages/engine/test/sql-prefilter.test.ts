// The bulk prefilter's translation, case by case. Soundness against real rows is the property
// test in packages/domain/test/prefilter-soundness.test.ts; here the shapes: what is translated,
// and what must stay "every participant".
import { describe, expect, it } from "vitest";
import type { Expression, RowPredicate, StudyEvent } from "../src/index";
import { bulkPrefilter, createInMemoryServices } from "../src/index";
import { NOW, call, environment, exp, num, str } from "./builders";

const TIMER: StudyEvent = { type: "TIMER", studyKey: "study1" };
const CUSTOM: StudyEvent = { type: "CUSTOM", studyKey: "study1" };
const ALL: RowPredicate = { kind: "const", value: true };
const NONE: RowPredicate = { kind: "const", value: false };

const prefilter = (rules: Expression[], event: StudyEvent = CUSTOM, env = environment()) =>
  bulkPrefilter(rules, event, env);

const flagIs = (key: string, value: string): RowPredicate => ({
  kind: "entry",
  field: "flags",
  key,
  test: { kind: "compare", type: "string", op: "eq", value },
});
const setFlag = exp("UPDATE_FLAG", str("bulk"), str("x"));

describe("bulkPrefilter", () => {
  it("selects the rows an IFTHEN's condition can hold for", async () => {
    expect(await prefilter([call("IFTHEN", exp("hasParticipantFlag", str("group"), str("g0")), setFlag)])).toEqual(
      flagIs("group", "g0"),
    );
  });

  it("folds what is the same for every participant: the event type, the clock, constant arithmetic", async () => {
    const rules = [
      call("IFTHEN", exp("checkEventType", str("TIMER")), exp("IF", exp("hasStudyStatus", str("a")), setFlag)),
      call(
        "IFTHEN",
        exp("and", exp("checkEventType", str("CUSTOM")), exp("gt", exp("sum", num(1), num(2)), num(2))),
        exp("IFTHEN", exp("hasParticipantFlagKey", str("k")), setFlag),
      ),
    ];
    expect(await prefilter(rules, TIMER)).toEqual({ kind: "column", field: "studyStatus", op: "eq", value: "a" });
    expect(await prefilter(rules, CUSTOM)).toEqual({ kind: "has-key", field: "flags", key: "k" });
  });

  it("compares survey times with now as this batch's clock gives it", async () => {
    const rules = [
      call(
        "IFTHEN",
        exp("lt", exp("getSurveyKeyAssignedUntil", str("weekly")), exp("timestampWithOffset", num(-60))),
        exp("REMOVE_SURVEYS_BY_KEY", str("weekly")),
      ),
    ];
    // no weekly survey reads as -1, which is before now: those rows may hold too
    expect(await prefilter(rules)).toEqual({
      kind: "or",
      items: [
        {
          kind: "not",
          item: { kind: "some-element", field: "assignedSurveys", match: { prop: "surveyKey", value: "weekly" } },
        },
        {
          kind: "some-element",
          field: "assignedSurveys",
          match: { prop: "surveyKey", value: "weekly" },
          where: {
            prop: "validUntil",
            tests: [{ kind: "missing" }, { kind: "compare", type: "number", op: "lt", value: NOW - 60 }],
          },
        },
      ],
    });
  });

  it("selects nothing when no rule can run any action", async () => {
    const rules = [
      call("IFTHEN", exp("checkEventType", str("TIMER")), setFlag),
      call("IF", exp("and", exp("hasStudyStatus", str("a")), num(0)), setFlag),
      call("IFTHEN", exp("hasStudyStatus", str("a"))),
      call("IFTHEN", num(0), setFlag),
    ];
    expect(await prefilter(rules, CUSTOM)).toEqual(NONE);
  });

  it("an IF's else branch runs wherever the condition is not true, failures included", async () => {
    const condition = exp("hasParticipantFlag", str("group"), str("g0"));
    expect(await prefilter([call("IF", condition, setFlag, setFlag)])).toEqual(ALL);
    expect(await prefilter([call("IF", condition, exp("IF", num(0), setFlag), setFlag)])).toEqual({
      kind: "not",
      item: flagIs("group", "g0"),
    });
    // a comparison of a number with text fails for everyone: only the else branch can run
    const failing = exp("lt", exp("getStudyEntryTime"), str("x"));
    expect(await prefilter([call("IF", failing, setFlag)])).toEqual(NONE);
    expect(await prefilter([call("IF", failing, exp("IF", num(0), setFlag), setFlag)])).toEqual(ALL);
  });

  it("keeps the negation of anything it cannot translate at every row", async () => {
    const random = exp("gt", exp("generateRandomNumber", num(0), num(9)), num(4));
    expect(await prefilter([call("IFTHEN", random, setFlag)])).toEqual(ALL);
    expect(await prefilter([call("IFTHEN", exp("not", random), setFlag)])).toEqual(ALL);
    expect(
      await prefilter([call("IFTHEN", exp("and", exp("not", random), exp("hasStudyStatus", str("a"))), setFlag)]),
    ).toEqual({ kind: "column", field: "studyStatus", op: "eq", value: "a" });
  });

  it("follows and, or and not with the engine's coercions", async () => {
    const a = exp("hasStudyStatus", str("a"));
    const status: RowPredicate = { kind: "column", field: "studyStatus", op: "eq", value: "a" };
    // text is neutral in and; a positive number is true in or; not of a number is true only for 0
    expect(await prefilter([call("IFTHEN", exp("and", a, str("x")), setFlag)])).toEqual(status);
    expect(await prefilter([call("IFTHEN", exp("or", a, num(2)), setFlag)])).toEqual(ALL);
    expect(await prefilter([call("IFTHEN", exp("or", a, num(-2)), setFlag)])).toEqual(status);
    expect(await prefilter([call("IFTHEN", exp("not", exp("or", a, num(0))), setFlag)])).toEqual({
      kind: "not",
      item: status,
    });
    expect(await prefilter([call("IFTHEN", exp("not", num(0)), setFlag)])).toEqual(ALL);
  });

  it("every participant on SUBMIT, and for actions that run unconditionally", async () => {
    const rule = call("IFTHEN", exp("hasStudyStatus", str("a")), setFlag);
    expect(await prefilter([rule], { type: "SUBMIT", studyKey: "study1" })).toEqual(ALL);
    expect(await prefilter([rule, call("UPDATE_FLAG", str("k"), str("v"))])).toEqual(ALL);
    expect(await prefilter([rule, call("DO", exp("IFTHEN", num(0), setFlag), setFlag)])).toEqual(ALL);
  });

  it("a condition with an effect of its own makes its rule run for everyone", async () => {
    const counter = exp("gt", exp("getNextStudyCounterValue", str("c")), num(100));
    expect(await prefilter([call("IFTHEN", counter, setFlag)])).toEqual(ALL);
    expect(
      await prefilter([
        call("IFTHEN", exp("hasStudyStatus", str("a")), exp("IF", counter, exp("IF", num(0), setFlag))),
      ]),
    ).toEqual({ kind: "column", field: "studyStatus", op: "eq", value: "a" });
  });

  it("reads study variables once, unless a function of the rules could change study data", async () => {
    const env = environment({ variables: [{ key: "limit", type: "int", value: 5 }] });
    const overLimit = exp("gt", exp("getStudyVariableInt", str("limit")), num(3));
    const rule = call("IFTHEN", exp("and", overLimit, exp("hasStudyStatus", str("a"))), setFlag);
    expect(await prefilter([rule], CUSTOM, env)).toEqual({
      kind: "column",
      field: "studyStatus",
      op: "eq",
      value: "a",
    });
    const lowered = environment({ variables: [{ key: "limit", type: "int", value: 1 }] });
    expect(await prefilter([rule], CUSTOM, lowered)).toEqual(NONE);
    const writer = call(
      "IFTHEN",
      exp("hasStudyStatus", str("b")),
      exp("UPDATE_STUDY_VARIABLE_INT", str("limit"), num(9)),
    );
    expect(await prefilter([rule, writer], CUSTOM, lowered)).toEqual({
      kind: "or",
      items: [
        { kind: "column", field: "studyStatus", op: "eq", value: "a" },
        { kind: "column", field: "studyStatus", op: "eq", value: "b" },
      ],
    });
    // a missing variable fails the condition for everyone
    const missing = environment();
    expect(await prefilter([rule], CUSTOM, missing)).toEqual(NONE);
  });

  it("flag values compare as text; a missing flag reads as the empty text", async () => {
    const rules = [call("IFTHEN", exp("lt", exp("getParticipantFlagValue", str("wave")), str("b")), setFlag)];
    expect(await prefilter(rules)).toEqual({
      kind: "or",
      items: [
        { kind: "entry", field: "flags", key: "wave", test: { kind: "missing" } },
        { kind: "entry", field: "flags", key: "wave", test: { kind: "compare", type: "string", op: "lt", value: "b" } },
      ],
    });
  });

  it("leaves comparisons with constants it cannot send untranslated", async () => {
    const rules = [call("IFTHEN", exp("hasParticipantFlagKey", str("a\u0000b")), setFlag)];
    expect(await prefilter(rules)).toEqual(ALL);
    const infinite = [call("IFTHEN", exp("lt", exp("getStudyEntryTime"), num(Number.MAX_VALUE * 2)), setFlag)];
    expect(await prefilter(infinite)).toEqual(ALL);
  });

  it("an invalid rule set selects every participant", async () => {
    expect(await prefilter([{ name: "NO_SUCH_ACTION" }])).toEqual(ALL);
    expect(await bulkPrefilter("not rules", CUSTOM, environment())).toEqual(ALL);
  });

  it("evaluates study data through the batch's ports only", async () => {
    const services = createInMemoryServices({ variables: [{ key: "on", type: "boolean", value: true }] });
    let reads = 0;
    const counting = { ...services, getStudyVariable: (key: string) => (reads++, services.getStudyVariable(key)) };
    const env = environment({}, counting);
    const rules = [
      call("IFTHEN", exp("and", exp("getStudyVariableBoolean", str("on")), exp("hasStudyStatus", str("a"))), setFlag),
    ];
    expect(await prefilter(rules, CUSTOM, env)).toEqual({ kind: "column", field: "studyStatus", op: "eq", value: "a" });
    expect(reads).toBe(1);
  });
});
