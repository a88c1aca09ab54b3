import { z } from "@hono/zod-openapi";

/**
 * From here on a CASE time is taken for milliseconds: 10^11 seconds is the year 5138, which no
 * real time in seconds reaches, while every time in milliseconds since March 1973 is above it.
 * case-backend decodes these fields as a plain int64 and stores whatever arrives; participant apps
 * send `Date.now()` (milliseconds) where the Go clients send `time.Now().Unix()` (seconds).
 */
export const CASE_MILLISECONDS_FROM = 100_000_000_000;

/** 9999-12-31T23:59:59Z: the last second a PostgreSQL timestamp column and a JS Date both take. */
const LAST_UNIX_SECOND = 253_402_300_799;

/** A CASE time in seconds or milliseconds as Unix seconds (milliseconds divided by 1000, floored). */
export const unixSecondsOfCaseTime = (value: number): number =>
  value >= CASE_MILLISECONDS_FROM ? Math.floor(value / 1000) : value;

/**
 * A Unix time in a CASE body (int64 in case-backend), in seconds or milliseconds, read as whole
 * seconds. Negative, fractional and non-numeric values, and times past the year 9999, are a 400
 * naming the field.
 */
export const caseUnixTimeInput = (name: string) =>
  z
    .number({ error: `${name} must be a Unix time (a number)` })
    .transform((value, ctx) => {
      if (!Number.isSafeInteger(value)) {
        ctx.addIssue({ code: "custom", message: `${name} must be whole Unix seconds or milliseconds` });
        return z.NEVER;
      }
      if (value < 0) {
        ctx.addIssue({ code: "custom", message: `${name} must not be negative` });
        return z.NEVER;
      }
      const seconds = unixSecondsOfCaseTime(value);
      if (seconds > LAST_UNIX_SECOND) {
        ctx.addIssue({ code: "custom", message: `${name} is beyond the year 9999` });
        return z.NEVER;
      }
      return seconds;
    })
    .openapi({
      type: "integer",
      format: "int64",
      minimum: 0,
      description: `Unix seconds, or milliseconds (a value of ${CASE_MILLISECONDS_FROM} or more), stored as seconds`,
    });
