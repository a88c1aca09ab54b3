/**
 * CSV records exactly as Go's `encoding/csv` Writer writes them with its defaults (comma, `\n`):
 * a field is quoted when it contains the comma, a quote, `\r` or `\n`, when its first character is
 * Unicode white space, or when it is exactly `\.`; inside quotes only `"` is doubled.
 *
 * Hand-written on purpose: no npm CSV writer reproduces Go's quoting rule (they quote on a leading
 * space only, or always, or not on `\.`), and building each batch as one string is cheaper than a
 * stream transform per cell. A formula guard (see {@link formulaGuarded}) is the one deliberate addition.
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
 * CSV injection): `=`, `+`, `-`, `@`, tab, carriage return. (ASVS adds NUL, which cannot reach a
 * file here: PostgreSQL's jsonb and text refuse it.)
 */
function startsLikeFormula(s: string): boolean {
  const c = s.charCodeAt(0);
  return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d;
}

/**
 * A plain decimal number (`-5`, `+3.5`, `.5`, `1e5`, `-2.5E-3`). A spreadsheet reads it as that
 * number and nothing else, so it is no formula and keeps its bytes: guarding it would turn every
 * negative answer into text. `-2+3` or `-1e5+cmd` are no numbers and are guarded.
 */
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The text of a cell a spreadsheet would evaluate, made inert: a `'` in front, which spreadsheet
 * programs read as "this cell is text" (OWASP's advice for CSV injection). Text that does not start
 * like a formula, and plain numbers, come back unchanged.
 */
export function formulaGuarded(s: string): string {
  return s.length > 0 && startsLikeFormula(s) && !PLAIN_NUMBER.test(s) ? "'" + s : s;
}

/**
 * One field. `guardFormulas` passes it through {@link formulaGuarded} first, so that a
 * participant's free text cannot run in a researcher's spreadsheet; the field is then quoted by Go's
 * rule, so a comma, quote or line break inside it can never start a new cell. CASE does not guard,
 * so this is off unless asked for; callers guard only the cells participants fill, never the
 * header or the ids.
 */
export function csvField(s: string, guardFormulas = false): string {
  const n = s.length;
  if (n === 0) return s;
  if (guardFormulas) {
    const guarded = formulaGuarded(s);
    if (guarded !== s) return csvField(guarded, false);
  }
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
