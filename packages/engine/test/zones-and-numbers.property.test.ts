// Properties of the zoned calendar over every IANA zone Node knows, against an independent oracle
// (Intl's own local date parts), and of the finite-number rule over generated rule sets.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyRules, compileRules, createDeterministicEnv, createInMemoryServices } from "../src/index";
import type { CalendarZone } from "../src/zoned-calendar";
import { calendarZone, formatDate, isoWeek, mondayOfNextIsoWeek, nextStartOfMonth } from "../src/zoned-calendar";
import { ruleSets, studyEvent } from "./arbitraries";
import { NOW, participant } from "./builders";

const RUNS = 400;
const DAY = 86_400;

const zoneNames = Intl.supportedValuesOf("timeZone");
const zoneName = fc.constantFrom(...zoneNames);
/** 1900–2100, where every zone has real rules (and the odd historical offset). */
const instant = fc.integer({ min: Date.UTC(1900, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 });

function zone(name: string): CalendarZone {
  const z = calendarZone(name);
  if (!z) throw new Error(`${name} is listed by Intl but not accepted`);
  return z;
}

interface Local {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Monday = 1 … Sunday = 7 */
  weekday: number;
}

const oracles = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/** Local wall-clock fields straight from Intl, independent of the engine's offset arithmetic. */
function local(name: string, seconds: number): Local {
  let format = oracles.get(name);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: name,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    oracles.set(name, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(seconds * 1000)) parts[part.type] = part.value;
  return {
    year: Number(parts["year"]),
    month: Number(parts["month"]),
    day: Number(parts["day"]),
    hour: Number(parts["hour"]),
    minute: Number(parts["minute"]),
    second: Number(parts["second"]),
    weekday: WEEKDAYS.indexOf(parts["weekday"] ?? "") + 1,
  };
}

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Weekday (Monday = 1) of 1 January, by Zeller-style arithmetic rather than Date. */
function jan1Weekday(y: number): number {
  const p = y - 1;
  const sunday0 = (1 + 5 * (p % 4) + 4 * (p % 100) + 6 * (p % 400)) % 7; // Gauss: 0 = Sunday
  return sunday0 === 0 ? 7 : sunday0;
}

const weeksInYear = (y: number): number => {
  const jan1 = jan1Weekday(y);
  return jan1 === 4 || (isLeap(y) && jan1 === 3) ? 53 : 52;
};

const CUMULATIVE = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/** ISO week from a calendar date and its weekday: week = ⌊(ordinal − weekday + 10) / 7⌋, wrapped. */
function oracleIsoWeek({ year, month, day, weekday }: Local): number {
  const ordinal = (CUMULATIVE[month - 1] ?? 0) + day + (month > 2 && isLeap(year) ? 1 : 0);
  const week = Math.floor((ordinal - weekday + 10) / 7);
  if (week < 1) return weeksInYear(year - 1);
  return week > weeksInYear(year) ? 1 : week;
}

const two = (n: number): string => String(n).padStart(2, "0");

describe("zoned calendar against Intl, every zone", () => {
  it("ISO week numbers and formatted dates are the local ones", () => {
    fc.assert(
      fc.property(zoneName, instant, (name, t) => {
        const l = local(name, t);
        expect(isoWeek(t, zone(name))).toBe(oracleIsoWeek(l));
        expect(formatDate(t, "yyyy-MM-dd HH:mm:ss", zone(name))).toBe(
          `${l.year}-${two(l.month)}-${two(l.day)} ${two(l.hour)}:${two(l.minute)}:${two(l.second)}`,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("the next start of a month is the first instant of that month locally, not before the reference", () => {
    fc.assert(
      fc.property(zoneName, instant, fc.integer({ min: 1, max: 12 }), (name, t, month) => {
        const r = nextStartOfMonth(month, t, zone(name));
        if (r === null) throw new Error("in range");
        expect(r).toBeGreaterThanOrEqual(t);
        expect(r - t).toBeLessThanOrEqual(367 * DAY);
        const first = local(name, r);
        expect([first.month, first.day]).toEqual([month, 1]);
        // midnight, or the moment clocks jumped over it
        if (first.hour !== 0 || first.minute !== 0 || first.second !== 0) {
          expect(zone(name).offsetAt(r - 1)).not.toBe(zone(name).offsetAt(r));
        }
        expect(local(name, r - 1).month).not.toBe(month);
      }),
      { numRuns: RUNS },
    );
  });

  it("the Monday of the next ISO week is a local Monday of that week at the reference's time of day", () => {
    fc.assert(
      fc.property(zoneName, instant, fc.integer({ min: 1, max: 53 }), (name, t, week) => {
        const r = mondayOfNextIsoWeek(week, t, zone(name));
        if (r === null) throw new Error("in range");
        const monday = local(name, r);
        const reference = local(name, t);
        expect(monday.weekday).toBe(1);
        expect(oracleIsoWeek(monday)).toBe(week);
        // the reference's own week counts, so at most 6 days (and an hour or so of offset change) back
        expect(r).toBeGreaterThan(t - 7 * DAY);
        const timeOfDay = (l: Local) => l.hour * 3600 + l.minute * 60 + l.second;
        if (timeOfDay(monday) !== timeOfDay(reference)) {
          // that wall time did not exist on the Monday: the moment the clocks jumped
          expect(zone(name).offsetAt(r - 1)).not.toBe(zone(name).offsetAt(r));
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe("finite numbers over generated rule sets", () => {
  it("every survey and message time a rule set writes is a safe integer, in any zone", async () => {
    await fc.assert(
      fc.asyncProperty(
        ruleSets,
        studyEvent,
        fc.oneof(zoneName, fc.constant("Mars/Olympus"), fc.constant(undefined)),
        async (rules, ev, timeZone) => {
          const env = {
            ...createDeterministicEnv({ now: NOW * 1000, services: createInMemoryServices({}) }),
            ...(timeZone === undefined ? {} : { timeZone }),
          };
          const result = await applyRules(compileRules(rules), participant(), ev, env, { onRuleError: "continue" });
          for (const e of result.errors ?? []) expect(e.message).not.toContain("internal error");
          for (const s of result.state.assignedSurveys) {
            expect(Number.isSafeInteger(s.validFrom) && Number.isSafeInteger(s.validUntil)).toBe(true);
          }
          for (const m of result.state.messages) expect(Number.isSafeInteger(m.scheduledFor)).toBe(true);
          for (const r of result.reports) {
            expect(Number.isSafeInteger(r.timestamp)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
