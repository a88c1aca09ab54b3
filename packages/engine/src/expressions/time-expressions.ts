// Timestamps and calendar functions. The calendar functions work in the study's time zone
// (EngineEnv.timeZone, default UTC); the reference used the server's local zone.
import type { EvalContext, Failed } from "../eval-context";
import { fail, nowSeconds } from "../eval-context";
import { timestampMessage } from "../finite-numbers";
import {
  BATCH_CONSTANT,
  NO_PARTICIPANT_FIELDS,
  anyArg,
  expressionFamily,
  numArg,
  optional,
  strArg,
} from "../function-spec";
import type { CalendarZone } from "../zoned-calendar";
import {
  calendarZone,
  formatDate,
  isCalendarTimestamp,
  isoWeek,
  mondayOfNextIsoWeek,
  monthFromName,
  nextStartOfMonth,
} from "../zoned-calendar";

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

/**
 * The study's zone, or a failure naming it. An env whose zone Intl does not accept is an error of
 * the calendar function that needed it, never an exception.
 */
function zoneOf(ctx: EvalContext, name: string): CalendarZone | Failed {
  const zone = calendarZone(ctx.env.timeZone);
  return zone ?? fail(ctx, `${name}: invalid time zone ${JSON.stringify(ctx.env.timeZone)} (not an IANA zone name)`);
}

export const timeExpressions = expressionFamily("time", [
  {
    name: "timestampWithOffset",
    summary:
      "(reference, or now) + delta, both truncated to whole seconds; a non-finite result or one beyond ±(2^53 − 1) is an error",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [numArg("delta", NUMBER_1), optional(numArg("reference", NUMBER_2))],
    evaluate: (ctx, args) => {
      const reference = args.length > 1 ? Math.trunc(args[1] as number) : nowSeconds(ctx);
      const delta = Math.trunc(args[0] as number);
      const result = reference + delta;
      if (Number.isSafeInteger(result)) return result + 0;
      return fail(ctx, timestampMessage("timestampWithOffset: reference + delta", `${reference} + ${delta}`));
    },
  },
  {
    name: "getTsForNextStartOfMonth",
    summary:
      "00:00 (study time zone) on the 1st of the next occurrence of the month (1–12 or English name / abbreviation)",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
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
      const zone = zoneOf(ctx, "getTsForNextStartOfMonth");
      if (typeof zone === "symbol") return zone;
      return nextStartOfMonth(month, reference, zone) ?? fail(ctx, OUT_OF_RANGE);
    },
  },
  {
    name: "getISOWeekForTs",
    summary: "ISO week number of a timestamp (study time zone)",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [numArg("timestamp", NUMBER_1)],
    evaluate: (ctx, [ts]) => {
      const seconds = Math.trunc(ts as number);
      if (!isCalendarTimestamp(seconds)) return fail(ctx, OUT_OF_RANGE);
      const zone = zoneOf(ctx, "getISOWeekForTs");
      return typeof zone === "symbol" ? zone : isoWeek(seconds, zone);
    },
  },
  {
    name: "getTsForNextISOWeek",
    summary:
      "Monday (same local time of day, study time zone) of the next ISO week with that number, the reference's own week included",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [numArg("week", NUMBER_1, { checkLiteral: checkWeek }), optional(numArg("reference", NUMBER_2))],
    evaluate: (ctx, args) => {
      const problem = checkWeek(args[0] as number);
      if (problem) return fail(ctx, problem);
      const reference = args.length > 1 ? Math.trunc(args[1] as number) : nowSeconds(ctx);
      if (!isCalendarTimestamp(reference)) return fail(ctx, OUT_OF_RANGE);
      const zone = zoneOf(ctx, "getTsForNextISOWeek");
      if (typeof zone === "symbol") return zone;
      return mondayOfNextIsoWeek(Math.trunc(args[0] as number), reference, zone) ?? fail(ctx, OUT_OF_RANGE);
    },
  },
  {
    name: "dateToStr",
    summary:
      "formats a timestamp as local time (study time zone) with date-fns tokens (yyyy yy MM M dd d HH hh mm m ss s a aa, 'quoted text')",
    returns: "str",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [
      numArg("timestamp", "dateToStr: first argument must be a number (timestamp)"),
      strArg("format", "dateToStr: second argument must be a string (format)"),
    ],
    evaluate: (ctx, [ts, format]) => {
      const seconds = Math.trunc(ts as number);
      if (!isCalendarTimestamp(seconds)) return fail(ctx, OUT_OF_RANGE);
      const zone = zoneOf(ctx, "dateToStr");
      return typeof zone === "symbol" ? zone : formatDate(seconds, format as string, zone);
    },
  },
]);
