// Finite numbers only: every number an action writes (participant state, reports, study variables,
// messages) is finite, and timestamps are whole seconds within ±(2^53 − 1); anything else fails
// the action with a message naming the value and changes nothing.
import { describe, expect, it } from "vitest";
import type { ApplyResult, ExpressionArg, SurveyResponse } from "../src/index";
import { applyAction, applyRules, compileRules, createInMemoryServices, evaluateExpression } from "../src/index";
import type { InMemorySeed } from "../src/index";
import { finiteInt64, finiteInteger, finiteNumber, finiteTimestamp } from "../src/finite-numbers";
import { NOW, call, environment, event, exp, num, participant, snapshotOf, str } from "./builders";

const MAX = Number.MAX_SAFE_INTEGER;
const TIMESTAMP = "must be a finite whole number of seconds (at most 9007199254740991 either way), got";
const INTEGER = "must be a finite whole number (at most 9007199254740991 either way), got";
const FINITE = "must be a finite number, got";

/** Non-finite numbers cannot be literals (the validator requires finite `num`), so they are parsed. */
const parsed = (text: string): ExpressionArg => exp("parseValueAsNum", str(text));

interface BadValue {
  title: string;
  arg: ExpressionArg;
  /** How the value is named in the message. */
  shown: string;
}
const nonFinite: BadValue[] = [
  { title: "Infinity", arg: parsed("inf"), shown: "Infinity" },
  { title: "-Infinity", arg: parsed("-Inf"), shown: "-Infinity" },
  { title: "NaN", arg: parsed("NaN"), shown: "NaN" },
];
const huge: BadValue = { title: "1e308", arg: num(1e308), shown: "1e+308" };

const variables: InMemorySeed = {
  variables: [
    { key: "limit", type: "int", value: 1 },
    { key: "ratio", type: "float", value: 0.5 },
    { key: "start", type: "date", value: 0 },
  ],
};

interface Writer {
  name: string;
  action: (value: ExpressionArg) => ReturnType<typeof call>;
  /** The message's subject and wording for a rejected value. */
  subject: string;
  wording: string;
  /** Whether 1e308 is accepted (finite numbers that are not timestamps or integers). */
  acceptsHuge: boolean;
  /** The written value of `fraction` (NOW + 0.75 for timestamps), read from the result. */
  written: (result: ApplyResult, seed: ReturnType<typeof createInMemoryServices>) => unknown;
  /** What `fraction` is written as. */
  fractionWritten: unknown;
  fraction: number;
}

const variableValue = (services: ReturnType<typeof createInMemoryServices>, key: string) =>
  services.snapshot().variables.find((v) => v.key === key)?.value;

const writers: Writer[] = [
  {
    name: "ADD_NEW_SURVEY validFrom",
    action: (v) => call("ADD_NEW_SURVEY", str("s"), v, num(NOW + 10), str("normal")),
    subject: "ADD_NEW_SURVEY: validFrom",
    wording: TIMESTAMP,
    acceptsHuge: false,
    written: (r) => r.state.assignedSurveys[0]?.validFrom,
    fraction: NOW + 0.75,
    fractionWritten: NOW,
  },
  {
    name: "ADD_NEW_SURVEY validUntil",
    action: (v) => call("ADD_NEW_SURVEY", str("s"), num(NOW), v, str("normal")),
    subject: "ADD_NEW_SURVEY: validUntil",
    wording: TIMESTAMP,
    acceptsHuge: false,
    written: (r) => r.state.assignedSurveys[0]?.validUntil,
    fraction: -1.5,
    fractionWritten: -1,
  },
  {
    name: "ADD_MESSAGE",
    action: (v) => call("ADD_MESSAGE", str("reminder"), v),
    subject: "ADD_MESSAGE: scheduledFor",
    wording: TIMESTAMP,
    acceptsHuge: false,
    written: (r) => r.state.messages[0]?.scheduledFor,
    fraction: NOW + 0.75,
    fractionWritten: NOW,
  },
  {
    name: "UPDATE_STUDY_VARIABLE_DATE",
    action: (v) => call("UPDATE_STUDY_VARIABLE_DATE", str("start"), v),
    subject: "UPDATE_STUDY_VARIABLE_DATE: value",
    wording: TIMESTAMP,
    acceptsHuge: false,
    written: (_r, s) => variableValue(s, "start"),
    fraction: NOW + 0.75,
    fractionWritten: NOW,
  },
  {
    name: "UPDATE_STUDY_VARIABLE_INT",
    action: (v) => call("UPDATE_STUDY_VARIABLE_INT", str("limit"), v),
    subject: "UPDATE_STUDY_VARIABLE_INT: value",
    wording: INTEGER,
    acceptsHuge: false,
    written: (_r, s) => variableValue(s, "limit"),
    fraction: -7.9,
    fractionWritten: -7,
  },
  {
    name: "UPDATE_STUDY_VARIABLE_FLOAT",
    action: (v) => call("UPDATE_STUDY_VARIABLE_FLOAT", str("ratio"), v),
    subject: "UPDATE_STUDY_VARIABLE_FLOAT: value",
    wording: FINITE,
    acceptsHuge: true,
    written: (_r, s) => variableValue(s, "ratio"),
    fraction: 0.75,
    fractionWritten: 0.75,
  },
  {
    name: "UPDATE_FLAG",
    action: (v) => call("UPDATE_FLAG", str("f"), v),
    subject: "UPDATE_FLAG: value",
    wording: FINITE,
    acceptsHuge: true,
    written: (r) => r.state.flags["f"],
    fraction: 0.75,
    fractionWritten: "0.750000",
  },
  {
    name: "UPDATE_REPORT_DATA",
    action: (v) => call("UPDATE_REPORT_DATA", str("r"), str("score"), v),
    subject: "UPDATE_REPORT_DATA: value",
    wording: FINITE,
    acceptsHuge: true,
    written: (r) => r.reports[0]?.data[0]?.value,
    fraction: 0.75,
    fractionWritten: "0.750000",
  },
  {
    name: 'UPDATE_REPORT_DATA dtype "int"',
    action: (v) => call("UPDATE_REPORT_DATA", str("r"), str("count"), v, str("int")),
    subject: "UPDATE_REPORT_DATA: value",
    wording: "must be a finite number whose whole part fits a 64-bit integer, got",
    acceptsHuge: false,
    written: (r) => r.reports[0]?.data[0]?.value,
    fraction: -3.9,
    fractionWritten: "-3",
  },
];

async function run(writer: Writer, value: ExpressionArg) {
  const services = createInMemoryServices(variables);
  const before = participant();
  const input = snapshotOf(before);
  const result = await applyAction(writer.action(value), before, event(), environment({}, services));
  return { result, services, input };
}

describe.each(writers)("$name", (writer) => {
  it.each(writer.acceptsHuge ? nonFinite : [...nonFinite, huge])(
    "rejects $title, naming it, and changes nothing",
    async (bad) => {
      const { result, services, input } = await run(writer, bad.arg);
      expect(result.error?.message).toBe(`rule 0: ${writer.subject} ${writer.wording} ${bad.shown}`);
      expect(result.state).toEqual(input);
      expect(result.reports).toEqual([]);
      expect(services.snapshot().variables).toEqual(variables.variables);
    },
  );

  if (writer.acceptsHuge) {
    it("accepts 1e308 (finite)", async () => {
      const { result } = await run(writer, huge.arg);
      expect(result.error).toBeUndefined();
    });
  }

  it("writes a fractional value as documented", async () => {
    const { result, services } = await run(writer, num(writer.fraction));
    expect(result.error).toBeUndefined();
    expect(writer.written(result, services)).toEqual(writer.fractionWritten);
  });

  it("accepts the largest safe integer", async () => {
    const { result } = await run(writer, num(MAX));
    expect(result.error).toBeUndefined();
  });
});

describe("timestamps at the edge of the safe range", () => {
  it("±(2^53 − 1) is stored, 2^53 is not", async () => {
    const ok = await applyAction(call("ADD_MESSAGE", str("m"), num(-MAX)), participant(), event(), environment());
    expect(ok.state.messages[0]?.scheduledFor).toBe(-MAX);
    const tooBig = await applyAction(
      call("ADD_MESSAGE", str("m"), num(2 ** 53)),
      participant(),
      event(),
      environment(),
    );
    expect(tooBig.error?.message).toBe(`rule 0: ADD_MESSAGE: scheduledFor ${TIMESTAMP} 9007199254740992`);
  });

  it("-0.5 truncates to 0, not -0", async () => {
    const result = await applyAction(call("ADD_MESSAGE", str("m"), num(-0.5)), participant(), event(), environment());
    expect(Object.is(result.state.messages[0]?.scheduledFor, 0)).toBe(true);
  });

  it("ADD_NEW_SURVEY: non-number times still become 0 (the reference's coercion)", async () => {
    const result = await applyAction(
      call("ADD_NEW_SURVEY", str("s"), str("inf"), str(""), str("n")),
      participant(),
      event(),
      environment(),
    );
    expect(result.state.assignedSurveys).toEqual([{ surveyKey: "s", validFrom: 0, validUntil: 0, category: "n" }]);
  });

  it("a value from the event payload is checked like any other", async () => {
    const result = await applyAction(
      call("ADD_MESSAGE", str("m"), exp("getEventPayloadValueAsNum", str("at"))),
      participant(),
      event({ payload: { at: Number.NaN } }),
      environment(),
    );
    expect(result.error?.message).toBe(`rule 0: ADD_MESSAGE: scheduledFor ${TIMESTAMP} NaN`);
  });

  it("UPDATE_REPORT_DATA that fails starts no report", async () => {
    const result = await applyAction(
      call("DO", exp("UPDATE_REPORT_DATA", str("r"), str("a"), parsed("inf"))),
      participant(),
      event(),
      environment(),
    );
    expect(result.error?.message).toContain("got Infinity");
    expect(result.reports).toEqual([]);
  });

  it("a study variable is checked before the ports are asked", async () => {
    const services = createInMemoryServices(variables);
    const calls: string[] = [];
    const spied = {
      ...services,
      getStudyVariable: (key: string) => {
        calls.push(key);
        return services.getStudyVariable(key);
      },
    };
    const result = await applyAction(
      call("UPDATE_STUDY_VARIABLE_INT", str("missing"), parsed("inf")),
      participant(),
      event(),
      environment({}, spied),
    );
    expect(result.error?.message).toBe(`rule 0: UPDATE_STUDY_VARIABLE_INT: value ${INTEGER} Infinity`);
    expect(calls).toEqual([]);
  });
});

describe('"inf" typed into a number field, end to end', () => {
  const answer = (value: string): SurveyResponse => ({
    key: "intake",
    arrivedAt: NOW - 5,
    responses: [{ key: "intake.delay", response: { key: "rg", items: [{ key: "num", value }] } }],
  });
  // IF, not IFTHEN: an IFTHEN goes on past a failing action (reported in skippedActions)
  const rules = compileRules([
    call(
      "IF",
      exp("checkEventType", str("SUBMIT")),
      exp(
        "ADD_MESSAGE",
        str("reminder"),
        exp("timestampWithOffset", exp("getResponseValueAsNum", str("intake.delay"), str("rg.num"))),
      ),
    ),
  ]);

  it("fails the rule with a message naming the value and leaves the state unchanged", async () => {
    const before = participant({ messages: [{ id: "m0", type: "other", scheduledFor: NOW + 1 }] });
    const input = snapshotOf(before);
    const result = await applyRules(rules, before, event({ type: "SUBMIT", response: answer("inf") }), environment());
    expect(result.error).toEqual({
      ruleIndex: 0,
      path: "rules[0].data[1].exp.data[1].exp",
      message: `rule 0: ADD_MESSAGE: timestampWithOffset: reference + delta ${TIMESTAMP} ${NOW} + Infinity`,
    });
    expect(result.state).toEqual(input);
    expect(before).toEqual(input);
    expect(result.changedPerRule).toEqual([false]);
  });

  it("without timestampWithOffset, ADD_MESSAGE itself names the value", async () => {
    const direct = compileRules([
      call("ADD_MESSAGE", str("reminder"), exp("getResponseValueAsNum", str("intake.delay"), str("rg.num"))),
    ]);
    const result = await applyRules(
      direct,
      participant(),
      event({ type: "SUBMIT", response: answer("-inf") }),
      environment(),
    );
    expect(result.error?.message).toBe(`rule 0: ADD_MESSAGE: scheduledFor ${TIMESTAMP} -Infinity`);
    expect(result.state.messages).toEqual([]);
  });

  it("a huge finite answer fails the same way", async () => {
    const result = await applyRules(
      rules,
      participant(),
      event({ type: "SUBMIT", response: answer("1e300") }),
      environment(),
    );
    expect(result.error?.message).toBe(
      `rule 0: ADD_MESSAGE: timestampWithOffset: reference + delta ${TIMESTAMP} ${NOW} + 1e+300`,
    );
  });

  it("an ordinary answer schedules the message", async () => {
    const result = await applyRules(
      rules,
      participant(),
      event({ type: "SUBMIT", response: answer("3600") }),
      environment(),
    );
    expect(result.error).toBeUndefined();
    expect(result.state.messages).toEqual([
      { id: "000000000000000000000001", type: "reminder", scheduledFor: NOW + 3600 },
    ]);
  });
});

describe("arithmetic that produces timestamps", () => {
  const evaluate = (expr: ReturnType<typeof call>, env = environment()) =>
    evaluateExpression(expr, participant(), event(), env);

  it.each([
    ["Infinity delta", call("timestampWithOffset", parsed("inf")), `${NOW} + Infinity`],
    ["NaN delta", call("timestampWithOffset", parsed("nan")), `${NOW} + NaN`],
    ["1e308 delta", call("timestampWithOffset", num(1e308)), `${NOW} + 1e+308`],
    ["-1e308 reference", call("timestampWithOffset", num(0), num(-1e308)), "-1e+308 + 0"],
    ["sum beyond 2^53", call("timestampWithOffset", num(MAX), num(1)), `1 + ${MAX}`],
  ])("timestampWithOffset fails on %s", async (_title, expr, shown) => {
    const result = await evaluate(expr);
    expect(result.error).toBe(`timestampWithOffset: reference + delta ${TIMESTAMP} ${shown}`);
    expect(result.value).toBe(0);
  });

  it("timestampWithOffset at the edge of the range", async () => {
    expect((await evaluate(call("timestampWithOffset", num(MAX - 1), num(1)))).value).toBe(MAX);
  });

  it.each([
    ["-1e308 … 1e308", num(-1e308), num(1e308), `generateRandomNumber: min ${INTEGER} -1e+308`],
    ["min Infinity", parsed("inf"), num(1), `generateRandomNumber: min ${INTEGER} Infinity`],
    ["max NaN", num(1), parsed("nan"), `generateRandomNumber: max ${INTEGER} NaN`],
    [
      "a span wider than 2^53 − 1",
      num(-MAX),
      num(MAX),
      `generateRandomNumber: max - min must be at most ${MAX}, got min -${MAX}, max ${MAX}`,
    ],
  ])("generateRandomNumber fails on %s", async (_title, min, max, message) => {
    const result = await evaluate(call("generateRandomNumber", min, max));
    expect(result.error).toBe(message);
  });

  it("generateRandomNumber over the widest allowed span stays exact and in range", async () => {
    for (const r of [0, 0.5, 1 - 2 ** -53]) {
      const env = { ...environment(), random: () => r };
      const { value, error } = await evaluate(call("generateRandomNumber", num(-1), num(MAX - 1)), env);
      expect(error).toBeUndefined();
      expect(Number.isSafeInteger(value)).toBe(true);
      expect(value as number).toBeGreaterThanOrEqual(-1);
      expect(value as number).toBeLessThanOrEqual(MAX - 1);
    }
    const top = await evaluate(call("generateRandomNumber", num(-1), num(MAX - 1)), {
      ...environment(),
      random: () => 1 - 2 ** -53,
    });
    expect(top.value).toBe(MAX - 1);
  });
});

describe("finite-numbers helpers", () => {
  it("return the value to write or the message", () => {
    expect(finiteTimestamp(1.9, "t")).toBe(1);
    expect(finiteTimestamp(Infinity, "t")).toBe(`t ${TIMESTAMP} Infinity`);
    expect(finiteInteger(-2.5, "i")).toBe(-2);
    expect(finiteInteger(2 ** 53, "i")).toBe(`i ${INTEGER} 9007199254740992`);
    expect(finiteNumber(1e308, "n")).toBe(1e308);
    expect(finiteNumber(NaN, "n")).toBe(`n ${FINITE} NaN`);
    expect(finiteInt64(2 ** 62, "r")).toBe(2 ** 62);
    expect(finiteInt64(2 ** 63, "r")).toBe(
      "r must be a finite number whose whole part fits a 64-bit integer, got 9223372036854776000",
    );
  });
});
