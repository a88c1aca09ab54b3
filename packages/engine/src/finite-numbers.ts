// The one place that decides which numbers may leave the engine: every number an action writes into
// participant state, reports, study variables or messages goes through one of these checks.
//
// The reference wrote whatever float64 it had. Infinity and NaN then broke on the way out (JSON has
// no such numbers: a scheduledFor of Infinity was stored as null and read back as 0, "due now"),
// and huge values such as 1e308 were stored but could not be read by a client decoding int64.
//
// - Timestamps (Unix seconds) and integers are truncated toward zero, as the reference's int64
//   conversion did (a fractional timestamp is not an error), and must then be safe integers:
//   |t| ≤ Number.MAX_SAFE_INTEGER (2^53 − 1), which every JavaScript number, JSON reader and int64
//   holds exactly. There is no narrower calendar range (such as years 0–9999): the reference stored
//   any int64, rules use far-future values to mean "never", and the calendar functions check their
//   own range.
// - Other numbers (float study variables, number text in flags and reports) must be finite.
//
// Each check returns the value to write, or the failure message (which names the value) as a
// string, so the success path allocates nothing:
//
//   const at = finiteTimestamp(value, "scheduledFor");
//   if (typeof at === "string") return reject(ctx, at);

/** Largest magnitude of a stored timestamp or integer. */
export const MAX_WHOLE = Number.MAX_SAFE_INTEGER;

const TWO_POW_63 = 2 ** 63;

/** How a rejected number is named in messages: "Infinity", "-Infinity", "NaN", "1e+308". */
export function numberText(value: number): string {
  return String(value);
}

/**
 * Whole seconds (truncated toward zero) of a finite value within ±MAX_WHOLE, or the message
 * "`what` must be a finite whole number of seconds …, got Infinity".
 */
export function finiteTimestamp(value: number, what: string): number | string {
  const whole = Math.trunc(value);
  if (Number.isSafeInteger(whole)) return whole + 0; // + 0 turns -0 into 0
  return timestampMessage(what, numberText(value));
}

/** The message of finiteTimestamp, for callers that describe the value themselves ("1704067200 + Infinity"). */
export function timestampMessage(what: string, got: string): string {
  return `${what} must be a finite whole number of seconds (at most ${MAX_WHOLE} either way), got ${got}`;
}

/** An integer (truncated toward zero) within ±MAX_WHOLE, or the failure message. */
export function finiteInteger(value: number, what: string): number | string {
  const whole = Math.trunc(value);
  if (Number.isSafeInteger(whole)) return whole + 0;
  return `${what} must be a finite whole number (at most ${MAX_WHOLE} either way), got ${numberText(value)}`;
}

/** A finite number, or the failure message. */
export function finiteNumber(value: number, what: string): number | string {
  return Number.isFinite(value) ? value : `${what} must be a finite number, got ${numberText(value)}`;
}

/**
 * A finite number whose truncation fits int64 (what Go's `%d` of `int(x)` prints correctly; beyond
 * that Go printed the minimum int64), or the failure message. The value itself is returned, not
 * truncated: the caller formats it.
 */
export function finiteInt64(value: number, what: string): number | string {
  if (Number.isFinite(value) && Math.abs(value) < TWO_POW_63) return value;
  return `${what} must be a finite number whose whole part fits a 64-bit integer, got ${numberText(value)}`;
}
