/** The largest Unix time in seconds a JavaScript Date holds (±8.64e15 ms). */
const MAX_DATE_SECONDS = 8_640_000_000_000;

/**
 * A date study variable's value (Unix seconds) as case-backend's Go encoder writes a time: RFC 3339
 * in UTC with fractional seconds only where there are any (`2026-11-01T00:00:00Z`). Every route that
 * shows such a value (the management API, the participant survey context, the public study list)
 * answers it in this one form; a number outside Date's range is shown as it is stored.
 */
export function caseDateValue<T>(value: T | number): T | number | string {
  if (typeof value !== "number" || !Number.isFinite(value) || Math.abs(value) > MAX_DATE_SECONDS) return value;
  return new Date(value * 1000)
    .toISOString()
    .replace(/(\.\d*?)0+Z$/, "$1Z")
    .replace(/\.Z$/, "Z");
}
