// Timestamps and calendar functions, all in UTC (the reference used the server's time zone).
import { fail, nowSeconds } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, anyArg, expressionFamily, numArg, optional, strArg } from "../function-spec";
import {
  formatUtcDate,
  isCalendarTimestamp,
  isoWeek,
  mondayOfNextIsoWeek,
  monthFromName,
  nextStartOfMonth,
} from "../utc-calendar";

const NUMBER_1 = "argument 1 should be resolved as type number (float64)";
const NUMBER_2 = "argument 2 should be resolved as type number (float64)";
const OUT_OF_RANGE = "timestamp out of the calendar's range";

function checkMonth(value: string | number): string | null {
  if (typeof value === "number") {
    const month = Math.trunc(value);
    return month >= 1 && month <= 12 ? null : "month number should be between 1 and 12";
  }
  return monthFromName(value) === undefined ? `invalid month name: ${value}` : null;
}

function checkWeek(value: string | number): string | null {
  const week = Math.trunc(Number(value));
  return week >= 1 && week <= 53 ? null : "argument 1 should be between 1 and 53";
}

export const timeExpressions = expressionFamily("time", [
  {
    name: "timestampWithOffset",
    summary: "(reference, or now) + delta, both truncated to whole seconds",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [numArg("delta", NUMBER_1), optional(numArg("reference", NUMBER_2))],
    evaluate: (ctx, args) => {
      const reference = args.length > 1 ? Math.trunc(args[1] as number) : nowSeconds(ctx);
      return reference + Math.trunc(args[0] as number);
    },
  },
  {
    name: "getTsForNextStartOfMonth",
    summary: "00:00 UTC on the 1st of the next occurrence of the month (1–12 or English name / abbreviation)",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [anyArg("month", { checkLiteral: checkMonth }), optional(numArg("reference", NUMBER_2))],
    evaluate: (ctx, args) => {
      const m = args[0];
      if (typeof m !== "number" && typeof m !== "string") {
        return fail(ctx, "argument 1 should be a month name (string) or month number (float64)");
      }
      const problem = checkMonth(m);
      if (problem) return fail(ctx, problem);
      const month = typeof m === "number" ? Math.trunc(m) : (monthFromName(m) as number);
      const reference = args.length > 1 ? Math.trunc(args[1] as number) : nowSeconds(ctx);
      if (!isCalendarTimestamp(reference)) return fail(ctx, OUT_OF_RANGE);
      return nextStartOfMonth(month, reference);
    },
  },
  {
    name: "getISOWeekForTs",
    summary: "ISO week number (UTC) of a timestamp",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [numArg("timestamp", NUMBER_1)],
    evaluate: (ctx, [ts]) => {
      const seconds = Math.trunc(ts as number);
      return isCalendarTimestamp(seconds) ? isoWeek(seconds) : fail(ctx, OUT_OF_RANGE);
    },
  },
  {
    name: "getTsForNextISOWeek",
    summary: "Monday (same time of day, UTC) of the next ISO week with that number, the reference's own week included",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [numArg("week", NUMBER_1, { checkLiteral: checkWeek }), optional(numArg("reference", NUMBER_2))],
    evaluate: (ctx, args) => {
      const problem = checkWeek(args[0] as number);
      if (problem) return fail(ctx, problem);
      const reference = args.length > 1 ? Math.trunc(args[1] as number) : nowSeconds(ctx);
      if (!isCalendarTimestamp(reference)) return fail(ctx, OUT_OF_RANGE);
      return mondayOfNextIsoWeek(Math.trunc(args[0] as number), reference) ?? fail(ctx, OUT_OF_RANGE);
    },
  },
  {
    name: "dateToStr",
    summary: "formats a timestamp in UTC with date-fns tokens (yyyy yy MM M dd d HH hh mm m ss s a aa, 'quoted text')",
    returns: "str",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [
      numArg("timestamp", "dateToStr: first argument must be a number (timestamp)"),
      strArg("format", "dateToStr: second argument must be a string (format)"),
    ],
    evaluate: (ctx, [ts, format]) => {
      const seconds = Math.trunc(ts as number);
      return isCalendarTimestamp(seconds) ? formatUtcDate(seconds, format as string) : fail(ctx, OUT_OF_RANGE);
    },
  },
]);
