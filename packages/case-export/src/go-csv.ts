/**
 * CSV records exactly as Go's `encoding/csv` Writer writes them with its defaults (comma, `\n`):
 * a field is quoted when it contains the comma, a quote, `\r` or `\n`, when its first character is
 * Unicode white space, or when it is exactly `\.`; inside quotes only `"` is doubled.
 *
 * Hand-written on purpose: no npm CSV writer reproduces Go's quoting rule (they quote on a leading
 * space only, or always, or not on `\.`), and building each batch as one string is cheaper than a
 * stream transform per cell. A formula guard (see {@link csvField}) is the one deliberate addition.
 */

/** Go's `unicode.IsSpace` for one UTF-16 code unit (every white-space code point is in the BMP). */
function isGoSpace(c: number): boolean {
  if (c <= 0xff) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/**
 * First characters that make spreadsheet programs evaluate a cell as a formula (OWASP's list for
 * CSV injection): `=`, `+`, `-`, `@`, tab, carriage return.
 */
function startsLikeFormula(s: string): boolean {
  const c = s.charCodeAt(0);
  return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d;
}

/**
 * One field. `guardFormulas` prefixes `'` to a field that starts like a formula, so that a
 * participant's free text cannot run in a researcher's spreadsheet; CASE does not do this, so it is
 * off unless asked for (it also turns a negative number `-5` into the text `'-5`).
 */
export function csvField(s: string, guardFormulas = false): string {
  const n = s.length;
  if (n === 0) return s;
  if (guardFormulas && startsLikeFormula(s)) return csvField("'" + s, false);
  let quote = isGoSpace(s.charCodeAt(0)) || s === "\\.";
  for (let i = 0; !quote && i < n; i++) {
    const c = s.charCodeAt(i);
    quote = c === 0x2c || c === 0x22 || c === 0x0a || c === 0x0d;
  }
  if (!quote) return s;
  return '"' + (s.includes('"') ? s.replaceAll('"', '""') : s) + '"';
}

/** One record with its line ending. */
export function csvRecord(fields: readonly string[], guardFormulas = false): string {
  let line = "";
  for (let i = 0; i < fields.length; i++) {
    line += (i === 0 ? "" : ",") + csvField(fields[i]!, guardFormulas);
  }
  return line + "\n";
}
