// Text conversions that must produce exactly what the reference's Go code produced, because the
// results end up in stored flags, reports and message payloads that existing studies read.

const INT64_MIN = "-9223372036854775808";
const TWO_POW_63 = 2 ** 63;

/** Go's `%f` (six decimals): 1 → "1.000000". */
export function formatFixed6(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  if (Object.is(x, -0)) return "-0.000000";
  // integers are the common case (counts, timestamps) and toFixed is comparatively slow
  if (Number.isSafeInteger(x)) return `${x}.000000`;
  // toFixed switches to exponent notation from 1e21 on; such numbers are integers anyway
  if (Math.abs(x) >= 1e21) return `${BigInt(x).toString()}.000000`;
  const text = x.toFixed(6);
  // An exact tie at the 7th decimal (x·2^7 odd: exactly 7 binary fraction digits) is rounded half
  // to even by Go but away from zero by toFixed, e.g. 0.0078125 → Go "0.007812", toFixed "0.007813".
  const lastDigit = text.charCodeAt(text.length - 1) - 48;
  if (Number.isInteger(x * 128) && !Number.isInteger(x * 64) && lastDigit % 2 === 1) {
    const magnitude = BigInt(text.replace("-", "").replace(".", "")) - 1n;
    const digits = magnitude.toString().padStart(7, "0");
    return `${x < 0 ? "-" : ""}${digits.slice(0, -6)}.${digits.slice(-6)}`;
  }
  return text;
}

/**
 * Go's `%d` of `int(x)`: truncation toward zero. Go on amd64 turns NaN, infinities and values out
 * of the int64 range into the minimum int64, and so do we.
 */
export function formatTruncatedInt(x: number): string {
  if (!Number.isFinite(x) || Math.abs(x) >= TWO_POW_63) return INT64_MIN;
  const t = Math.trunc(x);
  return Number.isSafeInteger(t) ? String(t === 0 ? 0 : t) : BigInt(t).toString();
}

/** Go's `%s%0*d`: prefix, then the value zero-padded to `width` digits (a negative width pads right with spaces). */
export function formatPaddedCounter(prefix: string, width: number, value: number): string {
  const digits = formatTruncatedInt(value);
  if (width < 0) return prefix + digits.padEnd(-width, " ");
  if (digits.startsWith("-")) return `${prefix}-${digits.slice(1).padStart(width - 1, "0")}`;
  return prefix + digits.padStart(width, "0");
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e6 on ("1e+06"). */
export function formatFloatV(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  // toExponential() without digits gives the shortest round-trip mantissa, as Go's shortest form does
  const [mantissa = "", expText = "0"] = x.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    const abs = Math.abs(exp);
    return `${mantissa}e${sign}${abs < 10 ? "0" : ""}${abs}`;
  }
  return String(x);
}

/** Go's `%v` of a decoded JSON value (event payload values in message payloads). */
export function formatValueV(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (typeof value === "string") return value;
  if (typeof value === "number") return formatFloatV(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map(formatValueV).join(" ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${formatValueV(v)}`).join(" ")}]`;
  }
  // not JSON (bigint, function, symbol): cannot come from a decoded payload
  return typeof value === "bigint" ? value.toString() : "";
}

/** Go's `%T` of a decoded JSON value, for the reference's "I don't know about type <T>" messages. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return "float64";
    case "boolean":
      return "bool";
    default:
      return Array.isArray(value) ? "[]interface {}" : "map[string]interface {}";
  }
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/;
const SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

/**
 * Go's strconv.ParseFloat: no surrounding blanks or trailing garbage (unlike JavaScript's
 * parseFloat), "inf"/"nan" accepted, hexadecimal with a binary exponent accepted.
 */
export function parseGoFloat(text: string): { ok: true; value: number } | { ok: false; error: string } {
  const quoted = JSON.stringify(text);
  const special = SPECIAL.exec(text);
  if (special) {
    const value = special[2]?.toLowerCase() === "nan" ? NaN : special[1] === "-" ? -Infinity : Infinity;
    return { ok: true, value };
  }
  let value: number;
  if (DECIMAL.test(text)) {
    value = Number(text);
  } else {
    const hex = HEX.exec(text);
    const whole = hex?.[2] ?? "";
    const fraction = hex?.[3] ?? "";
    if (!hex || whole.length + fraction.length === 0) {
      return { ok: false, error: `strconv.ParseFloat: parsing ${quoted}: invalid syntax` };
    }
    const mantissa = parseInt(whole + fraction, 16);
    value = mantissa * 2 ** (Number(hex[4]) - 4 * fraction.length);
    if (hex[1] === "-") value = -value;
  }
  if (!Number.isFinite(value)) return { ok: false, error: `strconv.ParseFloat: parsing ${quoted}: value out of range` };
  return { ok: true, value };
}
