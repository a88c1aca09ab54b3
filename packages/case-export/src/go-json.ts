/**
 * JSON text exactly as Go's `encoding/json` writes it, for the files CASE writes with `json.Marshal`
 * (and gin's `c.JSON`, which calls it). JSON.stringify differs in three ways that analysis scripts
 * comparing files byte for byte would see: Go escapes `<`, `>`, `&`, U+2028 and U+2029; it sorts the
 * keys of a map (by bytes); and it writes invalid UTF-16 (a lone surrogate) as U+FFFD.
 */

const HEX = "0123456789abcdef";

/** Whether code unit `c` makes a string leave the fast path of {@link goJsonString}. */
function needsEscape(c: number): boolean {
  return (
    c < 0x20 ||
    c === 0x22 || // "
    c === 0x5c || // \
    c === 0x3c || // <
    c === 0x3e || // >
    c === 0x26 || // &
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0xd800 && c <= 0xdfff)
  );
}

/** A string as Go's encoder quotes it (HTML-safe, \b and \f short forms as since Go 1.22). */
export function goJsonString(s: string): string {
  const n = s.length;
  let i = 0;
  // Almost every cell is plain text: one scan, no copy.
  while (i < n && !needsEscape(s.charCodeAt(i))) i++;
  if (i === n) return '"' + s + '"';
  let out = '"' + s.slice(0, i);
  let start = i;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!needsEscape(c)) continue;
    let rep: string;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a valid pair: written as is
        continue;
      }
      rep = "\\ufffd";
    } else if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = "\\\\";
    else if (c === 0x0a) rep = "\\n";
    else if (c === 0x0d) rep = "\\r";
    else if (c === 0x09) rep = "\\t";
    else if (c === 0x08) rep = "\\b";
    else if (c === 0x0c) rep = "\\f";
    else rep = "\\u" + HEX[(c >> 12) & 15] + HEX[(c >> 8) & 15] + HEX[(c >> 4) & 15] + HEX[c & 15];
    out += s.slice(start, i) + rep;
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

/**
 * A number as Go writes an int64 or a float64. For every finite double, JavaScript's shortest
 * round-trip form uses the same digits and the same switch to exponent form (below 1e-6, from 1e21)
 * as Go's `'f'`/`'e'` choice with its `e-07` → `e-7` clean-up; only negative zero differs.
 */
export function goJsonNumber(n: number): string {
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  return String(n);
}

/**
 * Go's string order (`sort.Strings`, map keys in `json.Marshal`) compares UTF-8 bytes, i.e. code
 * points. JavaScript's `<` compares UTF-16 code units, which puts U+E000–U+FFFF after astral
 * characters; remapping the units restores code-point order.
 */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(u: number): number {
  if (u >= 0xe000) return u - 0x800;
  if (u >= 0xd800) return u + 0x2000;
  return u;
}

/** Go's `json.Marshal` of a `map[string]string`: keys in byte order. */
export function goJsonStringMap(map: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(map).sort(compareGoStrings);
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = map[key];
    out += (i === 0 ? "" : ",") + goJsonString(key) + ":" + goJsonString(typeof v === "string" ? v : stringOf(v));
  }
  return out + "}";
}

/** Go's `json.Marshal` of a `map[string]int64`. */
export function goJsonNumberMap(map: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(map).sort(compareGoStrings);
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    out += (i === 0 ? "" : ",") + goJsonString(key) + ":" + goJsonNumber(int64Of(map[key]));
  }
  return out + "}";
}

/** A stored value read as Go would read it into a string field (numbers and booleans as text). */
export function stringOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return "";
}

/** A stored value read into an int64 field: whole numbers, anything else 0. */
export function int64Of(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? Math.trunc(v) : 0;
}
