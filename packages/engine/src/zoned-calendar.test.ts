import { describe, expect, it } from "vitest";
import type { CalendarZone } from "./zoned-calendar";
import {
  UTC_ZONE,
  calendarZone,
  formatDate,
  instantOfWall,
  isCalendarTimestamp,
  isoWeek,
  isoWeekday,
  mondayOfNextIsoWeek,
  monthFromName,
  nextStartOfMonth,
  wallSeconds,
} from "./zoned-calendar";

const utc = (y: number, m: number, d: number, h = 0, min = 0, s = 0) => Date.UTC(y, m - 1, d, h, min, s) / 1000;

describe("ISO weeks in UTC", () => {
  it.each([
    [utc(2021, 1, 3), 53],
    [utc(2021, 1, 4), 1],
    [utc(2024, 12, 30), 1],
    [utc(2020, 12, 31, 23, 59, 59), 53],
    [utc(2026, 6, 15), 25],
    [utc(1969, 12, 31), 1],
  ])("week of %s is %s", (ts, week) => expect(isoWeek(ts)).toBe(week));

  it("weekday", () => {
    expect(isoWeekday(utc(2024, 1, 1))).toBe(1);
    expect(isoWeekday(utc(2024, 1, 7, 23))).toBe(7);
  });

  it("Monday of the next week with a number, keeping the time of day", () => {
    expect(mondayOfNextIsoWeek(2, utc(2024, 1, 3, 10))).toBe(utc(2024, 1, 8, 10));
    expect(mondayOfNextIsoWeek(1, utc(2024, 1, 3, 10))).toBe(utc(2024, 1, 1, 10));
    expect(mondayOfNextIsoWeek(53, utc(2024, 1, 1))).toBe(utc(2026, 12, 28));
  });
});

describe("next start of month in UTC", () => {
  it.each([
    [3, utc(2024, 1, 15), utc(2024, 3, 1)],
    [1, utc(2024, 3, 1), utc(2025, 1, 1)],
    [3, utc(2024, 3, 1), utc(2024, 3, 1)],
    [3, utc(2024, 3, 1, 0, 0, 1), utc(2025, 3, 1)],
  ])("month %s after %s", (month, ref, expected) => expect(nextStartOfMonth(month, ref)).toBe(expected));

  it("month names", () => {
    expect(monthFromName("SEP")).toBe(9);
    expect(monthFromName("September")).toBe(9);
    expect(monthFromName("Sept")).toBeUndefined();
  });
});

describe("formatDate", () => {
  const ts = utc(2024, 3, 9, 15, 4, 5);
  it.each([
    ["yyyy-MM-dd HH:mm:ss", "2024-03-09 15:04:05"],
    ["d/M/yy h", "9/3/24 h"],
    ["hh:mm a aa", "03:04 PM PM"],
    ["'Today is' dd.MM.", "Today is 09.03."],
    ["'It''s' HH'h'", "It's 15h"],
    ["''", "'"],
    ["yyyyy", "2024y"],
    ["m:s", "4:5"],
    ["'unterminated", "unterminated"],
    ["Q1 2024", "Q1 2024"],
  ])("%s → %s", (format, text) => expect(formatDate(ts, format)).toBe(text));

  it("midnight and noon in 12-hour form", () => {
    expect(formatDate(utc(2024, 1, 1, 0), "hh a")).toBe("12 AM");
    expect(formatDate(utc(2024, 1, 1, 12), "hh a")).toBe("12 PM");
  });
});

// ---- time zones --------------------------------------------------------------------------------

/** Unix seconds of an ISO 8601 instant ("2026-03-29T01:00:00Z"). */
const at = (iso: string): number => Date.parse(iso) / 1000;

function zone(name: string): CalendarZone {
  const z = calendarZone(name);
  if (!z) throw new Error(`test setup: ${name} is not a zone`);
  return z;
}

const amsterdam = zone("Europe/Amsterdam");
const newYork = zone("America/New_York");
const sydney = zone("Australia/Sydney");
const kolkata = zone("Asia/Kolkata");

describe("calendarZone", () => {
  it("absent and UTC are the UTC fast path", () => {
    expect(calendarZone(undefined)).toBe(UTC_ZONE);
    expect(calendarZone("UTC")).toBe(UTC_ZONE);
    expect(calendarZone("Etc/UTC")?.isUtc).toBe(true);
  });

  it("caches one zone (one DateTimeFormat) per name", () => {
    expect(calendarZone("Europe/Amsterdam")).toBe(amsterdam);
    expect(amsterdam.isUtc).toBe(false);
  });

  it("names Intl does not accept are null, not exceptions", () => {
    for (const name of ["Mars/Olympus", "", "+01:00", "Europe/Amsterdam "]) expect(calendarZone(name)).toBeNull();
  });

  it("offsets, half-hour and historical (seconds) ones included", () => {
    expect(amsterdam.offsetAt(at("2026-01-15T12:00:00Z"))).toBe(3600);
    expect(amsterdam.offsetAt(at("2026-07-15T12:00:00Z"))).toBe(7200);
    expect(kolkata.offsetAt(at("2026-07-15T12:00:00Z"))).toBe(19_800);
    expect(newYork.offsetAt(at("2026-01-15T12:00:00Z"))).toBe(-18_000);
    // local mean time before 1883: -4:56:02
    expect(newYork.offsetAt(at("1850-01-01T00:00:00Z"))).toBe(-(4 * 3600 + 56 * 60 + 2));
    expect(wallSeconds(kolkata, 0)).toBe(19_800);
  });
});

describe("wall time to instant around DST transitions", () => {
  it("a wall time that occurs once", () => {
    expect(instantOfWall(amsterdam, at("2026-07-01T12:00:00Z"))).toBe(at("2026-07-01T10:00:00Z"));
  });

  it("a skipped wall time (clocks forward 02:00 → 03:00) is the moment of the jump", () => {
    expect(instantOfWall(amsterdam, at("2026-03-29T02:00:00Z"))).toBe(at("2026-03-29T01:00:00Z"));
    expect(instantOfWall(amsterdam, at("2026-03-29T02:30:00Z"))).toBe(at("2026-03-29T01:00:00Z"));
    expect(instantOfWall(amsterdam, at("2026-03-29T03:00:00Z"))).toBe(at("2026-03-29T01:00:00Z"));
    expect(instantOfWall(newYork, at("2026-03-08T02:30:00Z"))).toBe(at("2026-03-08T07:00:00Z"));
  });

  it("a repeated wall time (clocks back 03:00 → 02:00) is the first of the two", () => {
    expect(instantOfWall(amsterdam, at("2026-10-25T02:30:00Z"))).toBe(at("2026-10-25T00:30:00Z"));
    expect(instantOfWall(newYork, at("2026-11-01T01:30:00Z"))).toBe(at("2026-11-01T05:30:00Z"));
  });
});

describe("next start of month in a zone", () => {
  it.each([
    ["Amsterdam, summer", amsterdam, 9, "2026-06-15T00:00:00Z", "2026-08-31T22:00:00Z"],
    ["Amsterdam, winter", amsterdam, 1, "2026-06-15T00:00:00Z", "2026-12-31T23:00:00Z"],
    ["Amsterdam, just before local midnight", amsterdam, 9, "2026-08-31T21:59:59Z", "2026-08-31T22:00:00Z"],
    ["Amsterdam, exactly at local midnight", amsterdam, 9, "2026-08-31T22:00:00Z", "2026-08-31T22:00:00Z"],
    // 23:00 UTC on 31 August is already 1 September 01:00 in Amsterdam: next year
    ["Amsterdam, already the 1st locally", amsterdam, 9, "2026-08-31T23:00:00Z", "2027-08-31T22:00:00Z"],
    ["Amsterdam, just before spring forward", amsterdam, 4, "2026-03-29T00:59:59Z", "2026-03-31T22:00:00Z"],
    ["Amsterdam, just after spring forward", amsterdam, 4, "2026-03-29T01:00:00Z", "2026-03-31T22:00:00Z"],
    ["Amsterdam, just before fall back", amsterdam, 11, "2026-10-25T00:59:59Z", "2026-10-31T23:00:00Z"],
    ["Amsterdam, just after fall back", amsterdam, 11, "2026-10-25T01:00:00Z", "2026-10-31T23:00:00Z"],
    ["New York, before spring forward", newYork, 4, "2026-03-08T06:59:59Z", "2026-04-01T04:00:00Z"],
    ["New York, after spring forward", newYork, 4, "2026-03-08T07:00:00Z", "2026-04-01T04:00:00Z"],
    ["New York, winter", newYork, 3, "2026-02-15T00:00:00Z", "2026-03-01T05:00:00Z"],
    // 03:00 UTC on 1 January is still 31 December in New York: this coming 1 January
    ["New York, still the 31st locally", newYork, 1, "2027-01-01T03:00:00Z", "2027-01-01T05:00:00Z"],
    ["Sydney, January is summer time (+11)", sydney, 1, "2026-06-15T00:00:00Z", "2026-12-31T13:00:00Z"],
    ["Sydney, July is standard time (+10)", sydney, 7, "2026-06-15T00:00:00Z", "2026-06-30T14:00:00Z"],
    ["Sydney, just before fall back", sydney, 5, "2026-04-04T15:59:59Z", "2026-04-30T14:00:00Z"],
    ["Sydney, just after spring forward", sydney, 11, "2026-10-03T16:00:00Z", "2026-10-31T13:00:00Z"],
    ["Kolkata (+5:30)", kolkata, 9, "2026-06-15T00:00:00Z", "2026-08-31T18:30:00Z"],
  ])("%s", (_title, z, month, ref, expected) => expect(nextStartOfMonth(month, at(ref), z)).toBe(at(expected)));

  it("a local midnight that does not exist is the moment the clocks jump", () => {
    // Havana, 1 April 2012: 00:00 CST → 01:00 CDT; Asunción, 1 October 2023: 00:00 → 01:00
    expect(nextStartOfMonth(4, at("2012-03-15T12:00:00Z"), zone("America/Havana"))).toBe(at("2012-04-01T05:00:00Z"));
    expect(nextStartOfMonth(10, at("2023-09-15T12:00:00Z"), zone("America/Asuncion"))).toBe(at("2023-10-01T04:00:00Z"));
  });

  it("a local midnight that occurs twice is the first one", () => {
    // Havana, 1 November 2026: 01:00 CDT → 00:00 CST, so midnight is at 04:00 and again at 05:00 UTC
    const havana = zone("America/Havana");
    expect(nextStartOfMonth(11, at("2026-10-15T12:00:00Z"), havana)).toBe(at("2026-11-01T04:00:00Z"));
    expect(nextStartOfMonth(11, at("2026-11-01T04:00:00Z"), havana)).toBe(at("2026-11-01T04:00:00Z"));
    // the second midnight is after the first: the following year
    expect(nextStartOfMonth(11, at("2026-11-01T05:00:00Z"), havana)).toBe(at("2027-11-01T04:00:00Z"));
  });

  it("beyond the calendar's range is null", () => {
    expect(isCalendarTimestamp(8.64e12)).toBe(false);
    expect(nextStartOfMonth(12, 8.64e12 - 3 * 86_400, amsterdam)).toBeNull();
  });
});

describe("ISO weeks in a zone", () => {
  it.each([
    // Sunday 3 January 2027 23:30 UTC is Monday 4 January in Amsterdam: week 1 of 2027, not 53 of 2026
    ["Amsterdam", amsterdam, "2027-01-03T23:30:00Z", 1, 53],
    ["Amsterdam, turn of 2024/2025", amsterdam, "2024-12-29T23:30:00Z", 1, 52],
    ["Amsterdam, 2026-12-31T23:30Z is 2027 locally, still week 53", amsterdam, "2026-12-31T23:30:00Z", 53, 53],
    ["Sydney", sydney, "2026-12-27T14:00:00Z", 53, 52],
    ["Kolkata, Monday 00:00 local", kolkata, "2026-01-04T18:30:00Z", 2, 1],
    ["Kolkata, Sunday 23:59:59 local", kolkata, "2026-01-04T18:29:59Z", 1, 1],
    ["New York, Monday 20:00 UTC is Monday locally", newYork, "2026-01-05T20:00:00Z", 2, 2],
    ["New York, Monday 03:00 UTC is still Sunday", newYork, "2026-01-05T03:00:00Z", 1, 2],
  ])("%s", (_title, z, ts, week, utcWeek) => {
    expect(isoWeek(at(ts), z)).toBe(week);
    expect(isoWeek(at(ts))).toBe(utcWeek);
  });

  it("weekday in the zone", () => {
    expect(isoWeekday(at("2027-01-03T23:30:00Z"), amsterdam)).toBe(1);
    expect(isoWeekday(at("2027-01-03T23:30:00Z"))).toBe(7);
  });

  it.each([
    // Sunday 29 March 2026 01:30 CET, before the jump: Monday 01:30 CEST
    ["Amsterdam, before spring forward", amsterdam, 14, "2026-03-29T00:30:00Z", "2026-03-29T23:30:00Z"],
    // Sunday 03:30 CEST, after the jump
    ["Amsterdam, after spring forward", amsterdam, 14, "2026-03-29T01:30:00Z", "2026-03-30T01:30:00Z"],
    ["Amsterdam, from local midnight", amsterdam, 14, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"],
    ["Amsterdam, own week (in the past, CET)", amsterdam, 13, "2026-03-28T23:00:00Z", "2026-03-22T23:00:00Z"],
    // 02:30 on 25 October 2026 happens twice; both give Monday 02:30 CET
    ["Amsterdam, first 02:30 of fall back", amsterdam, 44, "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"],
    ["Amsterdam, second 02:30 of fall back", amsterdam, 44, "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"],
    ["New York, before spring forward", newYork, 11, "2026-03-08T06:30:00Z", "2026-03-09T05:30:00Z"],
    ["New York, after spring forward", newYork, 11, "2026-03-08T07:30:00Z", "2026-03-09T07:30:00Z"],
    ["Sydney, before fall back", sydney, 15, "2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z"],
    ["Sydney, after fall back", sydney, 15, "2026-04-04T16:30:00Z", "2026-04-05T16:30:00Z"],
    ["Sydney, before spring forward", sydney, 41, "2026-10-03T15:30:00Z", "2026-10-04T14:30:00Z"],
    ["Sydney, after spring forward", sydney, 41, "2026-10-03T16:30:00Z", "2026-10-04T16:30:00Z"],
    ["Kolkata, from local midnight", kolkata, 2, "2025-12-31T18:30:00Z", "2026-01-04T18:30:00Z"],
  ])("Monday of the next week: %s", (_title, z, week, ref, expected) =>
    expect(mondayOfNextIsoWeek(week, at(ref), z)).toBe(at(expected)),
  );
});

describe("formatDate in a zone", () => {
  it.each([
    ["Amsterdam, 2026-12-31T23:30Z is already 2027", amsterdam, "2026-12-31T23:30:00Z", "2027-01-01 00:30:00 AM"],
    ["Amsterdam, summer", amsterdam, "2026-07-01T12:00:00Z", "2026-07-01 14:00:00 PM"],
    ["Amsterdam, the jump", amsterdam, "2026-03-29T01:00:00Z", "2026-03-29 03:00:00 AM"],
    ["Amsterdam, a second before it", amsterdam, "2026-03-29T00:59:59Z", "2026-03-29 01:59:59 AM"],
    ["Amsterdam, first 02:30", amsterdam, "2026-10-25T00:30:00Z", "2026-10-25 02:30:00 AM"],
    ["Amsterdam, second 02:30", amsterdam, "2026-10-25T01:30:00Z", "2026-10-25 02:30:00 AM"],
    ["New York, the jump", newYork, "2026-03-08T07:00:00Z", "2026-03-08 03:00:00 AM"],
    ["New York, a second before it", newYork, "2026-03-08T06:59:59Z", "2026-03-08 01:59:59 AM"],
    ["Sydney", sydney, "2026-12-31T13:00:00Z", "2027-01-01 00:00:00 AM"],
    ["Kolkata, the epoch", kolkata, "1970-01-01T00:00:00Z", "1970-01-01 05:30:00 AM"],
  ])("%s", (_title, z, ts, text) => expect(formatDate(at(ts), "yyyy-MM-dd HH:mm:ss a", z)).toBe(text));

  it("12-hour clock and short tokens use local time", () => {
    expect(formatDate(at("2026-07-01T10:05:09Z"), "d/M/yy hh:m:s aa", amsterdam)).toBe("1/7/26 12:5:9 PM");
  });
});
