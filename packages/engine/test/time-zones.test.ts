// The calendar functions in the study's time zone (EngineEnv.timeZone, default UTC), through the
// public entry points; the zone arithmetic itself is tested in src/zoned-calendar.test.ts.
import { describe, expect, it } from "vitest";
import type { EngineEnv, Expression } from "../src/index";
import { applyRules, compileRules, evaluateExpression } from "../src/index";
import { call, environment, event, exp, num, participant, snapshotOf, str } from "./builders";

const at = (iso: string): number => Date.parse(iso) / 1000;
const inZone = (timeZone: string): EngineEnv => ({ ...environment(), timeZone });
const evaluate = (expr: Expression, env: EngineEnv) => evaluateExpression(expr, participant(), event(), env);

describe("calendar functions in the study's time zone", () => {
  it('a Dutch study\'s "next 1 September" is local midnight, two hours before UTC midnight', async () => {
    const expr = call("getTsForNextStartOfMonth", str("September"), num(at("2026-06-15T09:00:00Z")));
    expect((await evaluate(expr, inZone("Europe/Amsterdam"))).value).toBe(at("2026-08-31T22:00:00Z"));
    expect((await evaluate(expr, environment())).value).toBe(at("2026-09-01T00:00:00Z"));
    expect((await evaluate(expr, inZone("UTC"))).value).toBe(at("2026-09-01T00:00:00Z"));
  });

  it.each([
    [
      "getTsForNextStartOfMonth",
      call("getTsForNextStartOfMonth", num(1), num(at("2026-12-31T23:30:00Z"))),
      at("2027-12-31T23:00:00Z"),
      at("2027-01-01T00:00:00Z"),
    ],
    ["getISOWeekForTs", call("getISOWeekForTs", num(at("2027-01-03T23:30:00Z"))), 1, 53],
    [
      "getTsForNextISOWeek",
      call("getTsForNextISOWeek", num(14), num(at("2026-03-28T23:00:00Z"))),
      at("2026-03-29T22:00:00Z"),
      at("2026-03-30T23:00:00Z"),
    ],
    [
      "dateToStr",
      call("dateToStr", num(at("2026-12-31T23:30:00Z")), str("yyyy-MM-dd HH:mm")),
      "2027-01-01 00:30",
      "2026-12-31 23:30",
    ],
  ])("%s: Amsterdam vs UTC", async (_name, expr, amsterdam, utc) => {
    expect(await evaluate(expr, inZone("Europe/Amsterdam"))).toEqual({ value: amsterdam });
    expect(await evaluate(expr, environment())).toEqual({ value: utc });
  });

  it("the default reference (now) is read in the zone too", async () => {
    // environment() is at 2024-01-01T00:00:00Z, already 01:00 on 1 January in Amsterdam
    const expr = call("getTsForNextStartOfMonth", num(1));
    expect((await evaluate(expr, inZone("Europe/Amsterdam"))).value).toBe(at("2024-12-31T23:00:00Z"));
    expect((await evaluate(expr, environment())).value).toBe(at("2024-01-01T00:00:00Z"));
  });
});

describe("an invalid time zone", () => {
  const bad = inZone("Mars/Olympus");

  it.each([
    ["getTsForNextStartOfMonth", call("getTsForNextStartOfMonth", num(3)), 0],
    ["getISOWeekForTs", call("getISOWeekForTs", num(0)), 0],
    ["getTsForNextISOWeek", call("getTsForNextISOWeek", num(3)), 0],
    ["dateToStr", call("dateToStr", num(0), str("yyyy")), ""],
  ])("is an error of %s naming the zone, not an exception", async (name, expr, zero) => {
    expect(await evaluate(expr, bad)).toEqual({
      value: zero,
      error: `${name}: invalid time zone "Mars/Olympus" (not an IANA zone name)`,
    });
  });

  it("an empty name is invalid too (absent means UTC)", async () => {
    const result = await evaluate(call("getISOWeekForTs", num(0)), inZone(""));
    expect(result.error).toBe('getISOWeekForTs: invalid time zone "" (not an IANA zone name)');
  });

  it("fails only the rule that needs the zone", async () => {
    const rules = compileRules([
      call("UPDATE_FLAG", str("a"), str("1")),
      call("UPDATE_FLAG", str("day"), exp("dateToStr", exp("timestampWithOffset", num(0)), str("yyyy-MM-dd"))),
      call("UPDATE_FLAG", str("b"), str("2")),
    ]);
    const before = participant();
    const input = snapshotOf(before);
    const result = await applyRules(rules, before, event(), bad, { onRuleError: "continue" });
    expect(result.errors).toEqual([
      {
        ruleIndex: 1,
        path: "rules[1].data[1].exp",
        message: 'rule 1: UPDATE_FLAG: dateToStr: invalid time zone "Mars/Olympus" (not an IANA zone name)',
      },
    ]);
    expect(result.state.flags).toEqual({ a: "1", b: "2" });
    expect(before).toEqual(input);
  });

  it("the other functions do not care", async () => {
    expect(await evaluate(call("timestampWithOffset", num(5), num(10)), bad)).toEqual({ value: 15 });
  });
});
