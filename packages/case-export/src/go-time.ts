/**
 * Times and numbers as Go formats and parses them in CASE's report export: `time.Time` in RFC 3339
 * (UTC, as the Mongo driver decodes dates) and `strconv.ParseFloat`'s accepted syntax.
 */

/** Go's `time.Unix(sec, nanos).UTC().Format(time.RFC3339Nano)` (RFC3339 when `nanos` is 0). */
export function goRfc3339(sec: number, nanos = 0): string {
  const days = Math.floor(sec / 86400);
  let rest = sec - days * 86400;
  const hh = Math.floor(rest / 3600);
  rest -= hh * 3600;
  const mm = Math.floor(rest / 60);
  const ss = rest - mm * 60;
  // Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  // Go pads the year to four digits and puts a minus sign before the padding.
  const year = (y < 0 ? "-" : "") + String(Math.abs(y)).padStart(4, "0");
  let frac = "";
  if (nanos > 0) frac = "." + String(nanos).padStart(9, "0").replace(/0+$/, "");
  return `${year}-${two(m)}-${two(d)}T${two(hh)}:${two(mm)}:${two(ss)}${frac}Z`;
}

function two(n: number): string {
  return n < 10 ? "0" + String(n) : String(n);
}

/** Go's zero `time.Time`, which `json.Marshal` writes even under `omitempty`. */
export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

const DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The whole seconds of a report's `date` value, as CASE reads them (`ParseFloat`, then int64), or
 * null where CASE keeps the text: not a decimal number, out of float range, or (deliberately, see
 * the README) infinities, NaN and values beyond int64 whose conversion Go leaves to the machine.
 */
export function goDateSeconds(value: string): number | null {
  if (!DECIMAL_FLOAT.test(value)) return null;
  const f = Number(value);
  if (!Number.isFinite(f) || Math.abs(f) >= 9.2e18) return null;
  return Math.trunc(f);
}
