import { describe, expect, it } from "vitest";
import {
  formatUtcDate,
  isoWeek,
  isoWeekday,
  mondayOfNextIsoWeek,
  monthFromName,
  nextStartOfMonth,
} from "./utc-calendar";

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

describe("formatUtcDate", () => {
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
  ])("%s → %s", (format, text) => expect(formatUtcDate(ts, format)).toBe(text));

  it("midnight and noon in 12-hour form", () => {
    expect(formatUtcDate(utc(2024, 1, 1, 0), "hh a")).toBe("12 AM");
    expect(formatUtcDate(utc(2024, 1, 1, 12), "hh a")).toBe("12 PM");
  });
});
