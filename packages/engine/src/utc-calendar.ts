// Calendar arithmetic in UTC. The reference used the server's local time zone, so the same rule gave
// different timestamps on differently configured machines.

const DAY = 86_400;
/** Date handles ±8.64e15 ms; beyond that there is no calendar date. */
const MAX_SECONDS = 8.64e12;

export function isCalendarTimestamp(seconds: number): boolean {
  return Number.isFinite(seconds) && Math.abs(seconds) <= MAX_SECONDS;
}

/** ISO 8601 week number (1–53) of a Unix timestamp. */
export function isoWeek(seconds: number): number {
  const date = new Date(Math.floor(seconds / DAY) * DAY * 1000);
  const isoDay = (date.getUTCDay() + 6) % 7; // Monday = 0
  // the week belongs to the year of its Thursday
  date.setUTCDate(date.getUTCDate() - isoDay + 3);
  const thursday = date.getTime();
  const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
  return 1 + Math.floor((thursday - yearStart) / (7 * DAY * 1000));
}

/** Monday = 1 … Sunday = 7. */
export function isoWeekday(seconds: number): number {
  const day = new Date(Math.floor(seconds / DAY) * DAY * 1000).getUTCDay();
  return day === 0 ? 7 : day;
}

/**
 * Monday (same time of day) of the next ISO week numbered `week`, counting the reference's own week.
 * Returns null if no such week comes within 400 weeks (cannot happen for 1–53: week 53 recurs
 * at least every 6 years).
 */
export function mondayOfNextIsoWeek(week: number, referenceSeconds: number): number | null {
  let t = referenceSeconds;
  for (let i = 0; i < 400 * 7; i++, t += DAY) {
    if (isoWeek(t) === week) return t - (isoWeekday(t) - 1) * DAY;
  }
  return null;
}

/**
 * 00:00 UTC on the 1st of the next occurrence of `month` (1–12). A reference inside that month,
 * after midnight of the 1st, moves to the following year.
 */
export function nextStartOfMonth(month: number, referenceSeconds: number): number {
  const ref = new Date(referenceSeconds * 1000);
  const currentYear = ref.getUTCFullYear();
  const currentMonth = ref.getUTCMonth() + 1;
  const targetYear = currentMonth > month ? currentYear + 1 : currentYear;
  let first = Date.UTC(targetYear, month - 1, 1) / 1000;
  if (currentMonth === month && referenceSeconds > first) first = Date.UTC(targetYear + 1, month - 1, 1) / 1000;
  return first;
}

const MONTH_NAMES: ReadonlyMap<string, number> = new Map([
  ["january", 1],
  ["jan", 1],
  ["february", 2],
  ["feb", 2],
  ["march", 3],
  ["mar", 3],
  ["april", 4],
  ["apr", 4],
  ["may", 5],
  ["june", 6],
  ["jun", 6],
  ["july", 7],
  ["jul", 7],
  ["august", 8],
  ["aug", 8],
  ["september", 9],
  ["sep", 9],
  ["october", 10],
  ["oct", 10],
  ["november", 11],
  ["nov", 11],
  ["december", 12],
  ["dec", 12],
]);

/** English month name or three-letter abbreviation, any case. */
export function monthFromName(name: string): number | undefined {
  return MONTH_NAMES.get(name.toLowerCase());
}

// ---- date formatting ---------------------------------------------------------------------------

type Part = (d: Date) => string;
const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
const hour12 = (d: Date): number => d.getUTCHours() % 12 || 12;

/** The date-fns style tokens the reference supported, by letter, longest first. */
const TOKENS: Readonly<Record<string, ReadonlyArray<readonly [number, Part]>>> = {
  y: [
    [4, (d) => String(d.getUTCFullYear()).padStart(4, "0")],
    [2, (d) => two(((d.getUTCFullYear() % 100) + 100) % 100)],
  ],
  M: [
    [2, (d) => two(d.getUTCMonth() + 1)],
    [1, (d) => String(d.getUTCMonth() + 1)],
  ],
  d: [
    [2, (d) => two(d.getUTCDate())],
    [1, (d) => String(d.getUTCDate())],
  ],
  H: [[2, (d) => two(d.getUTCHours())]],
  h: [[2, (d) => two(hour12(d))]],
  m: [
    [2, (d) => two(d.getUTCMinutes())],
    [1, (d) => String(d.getUTCMinutes())],
  ],
  s: [
    [2, (d) => two(d.getUTCSeconds())],
    [1, (d) => String(d.getUTCSeconds())],
  ],
  a: [
    [2, (d) => (d.getUTCHours() < 12 ? "AM" : "PM")],
    [1, (d) => (d.getUTCHours() < 12 ? "AM" : "PM")],
  ],
};

const isLetter = (c: string): boolean => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");

/**
 * Formats a Unix timestamp in UTC with date-fns style tokens (yyyy yy MM M dd d HH hh mm m ss s a aa).
 * The format is tokenised like date-fns: text in single quotes is literal ('' is a quote), letters
 * without a supported token are copied as they are, everything else is literal.
 */
export function formatUtcDate(seconds: number, format: string): string {
  const date = new Date(Math.trunc(seconds) * 1000);
  let out = "";
  let i = 0;
  while (i < format.length) {
    const c = format.charAt(i);
    if (c === "'") {
      if (format.charAt(i + 1) === "'") {
        out += "'";
        i += 2;
        continue;
      }
      let j = i + 1;
      while (j < format.length) {
        if (format.charAt(j) === "'") {
          if (format.charAt(j + 1) === "'") {
            out += "'";
            j += 2;
            continue;
          }
          break;
        }
        out += format.charAt(j);
        j++;
      }
      i = j + 1;
      continue;
    }
    if (!isLetter(c)) {
      out += c;
      i++;
      continue;
    }
    let run = 1;
    while (format.charAt(i + run) === c) run++;
    i += run;
    const tokens = TOKENS[c];
    // a run longer than any token splits greedily, as the reference's replacement did ("yyyyy" → year + "y")
    while (run > 0) {
      const token = tokens?.find(([length]) => length <= run);
      if (!token) {
        out += c;
        run--;
        continue;
      }
      out += token[1](date);
      run -= token[0];
    }
  }
  return out;
}
