// Calendar arithmetic in a study's time zone (an IANA name, `EngineEnv.timeZone`, default UTC).
// The reference used the server's local zone, so the same rule gave different timestamps on
// differently configured machines; a study's own zone gives the same dates on every server.
//
// Everything works on "wall seconds": the local wall-clock time read as if it were UTC
// (instant + the zone's offset at that instant), so the Date UTC getters give the local calendar
// fields. Converting a wall time back to an instant is where daylight saving time matters: a wall
// time that occurs twice (clocks go back) resolves to the first of the two instants, and one that
// does not occur (clocks go forward over it) to the first instant after the gap, the moment the
// clocks jump. Both are "the first instant at or after that wall time".

const DAY = 86_400;
/** Date handles ±8.64e15 ms; beyond that there is no calendar date. */
const MAX_SECONDS = 8.64e12;
/** Timestamps the calendar functions accept and return: two days short of Date's limit, so wall times stay inside it. */
const MAX_CALENDAR_SECONDS = MAX_SECONDS - 2 * DAY;

export function isCalendarTimestamp(seconds: number): boolean {
  return Number.isFinite(seconds) && Math.abs(seconds) <= MAX_CALENDAR_SECONDS;
}

// ---- time zones --------------------------------------------------------------------------------

/** A time zone: its offset from UTC at an instant. */
export interface CalendarZone {
  /** The name as configured (for messages). */
  readonly name: string;
  /** Offsets are always 0: no Intl work at all. */
  readonly isUtc: boolean;
  /** Local wall-clock time minus UTC, in seconds, at an instant (Unix seconds). */
  offsetAt(seconds: number): number;
}

export const UTC_ZONE: CalendarZone = Object.freeze({ name: "UTC", isUtc: true, offsetAt: () => 0 });

/** "GMT", "GMT+05:30", "GMT-04:56:02" (historical local mean time has seconds). */
const OFFSET = /GMT(?:([+-])(\d{1,2}):(\d{2})(?::(\d{2}))?)?/;

/** Offsets remembered per zone, by exact instant: a bulk run asks for the same few instants again and again. */
const MEMO_SIZE = 256;

function intlZone(name: string, format: Intl.DateTimeFormat): CalendarZone {
  const memo = new Map<number, number>();
  return {
    name,
    isUtc: false,
    offsetAt(seconds) {
      const known = memo.get(seconds);
      if (known !== undefined) return known;
      // Intl rejects instants Date cannot hold; the edges of that range are as good as any there
      const clamped = seconds > MAX_SECONDS ? MAX_SECONDS : seconds < -MAX_SECONDS ? -MAX_SECONDS : seconds;
      if (Number.isNaN(clamped)) return 0;
      const match = OFFSET.exec(format.format(clamped * 1000));
      let offset = 0;
      if (match?.[1]) {
        const magnitude = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
        offset = match[1] === "-" ? -magnitude : magnitude;
      }
      if (memo.size >= MEMO_SIZE) memo.clear();
      memo.set(seconds, offset);
      return offset;
    },
  };
}

/** Names Intl resolves to UTC itself ("Etc/UTC", "utc", …) take the UTC fast path as well. */
function createZone(name: string): CalendarZone | null {
  let format: Intl.DateTimeFormat;
  try {
    // an hour as well as the offset: formatting the offset alone adds a whole date, which is slower
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: name,
      hour: "numeric",
      hourCycle: "h23",
      timeZoneName: "longOffset",
    });
  } catch {
    return null;
  }
  const resolved = format.resolvedOptions().timeZone;
  return resolved === "UTC" || resolved === "Etc/UTC" ? { ...UTC_ZONE, name } : intlZone(name, format);
}

/** One zone (one DateTimeFormat) per name; invalid names are remembered as null. */
const zones = new Map<string, CalendarZone | null>();
/** Names come from study configuration, so a handful; the bound only keeps a misuse from growing without end. */
const MAX_CACHED_ZONES = 1000;

/**
 * IANA zone names only ("Europe/Amsterdam", "Etc/GMT+1", "UTC"): newer Node versions also take
 * offsets such as "+01:00", which are no zone (no DST) and would make a study's setting valid on
 * one runtime and not on another.
 */
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** A name the calendar functions accept: an IANA zone name that Intl knows. */
export function isTimeZoneName(name: string): boolean {
  return calendarZone(name) !== null;
}

/**
 * The zone called `name` (absent means UTC), or null if it is no IANA name Intl accepts. Names are
 * not canonicalised beyond what Intl does ("europe/amsterdam" is accepted, "" and "+01:00" are not).
 */
export function calendarZone(name: string | undefined): CalendarZone | null {
  if (name === undefined || name === "UTC") return UTC_ZONE;
  if (!IANA_NAME.test(name)) return null;
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = createZone(name);
    if (zones.size >= MAX_CACHED_ZONES) zones.clear();
    zones.set(name, zone);
  }
  return zone;
}

/** Wall seconds (local wall-clock time read as UTC) of an instant. */
export function wallSeconds(zone: CalendarZone, seconds: number): number {
  return zone.isUtc ? seconds : seconds + zone.offsetAt(seconds);
}

/**
 * The first instant whose local wall-clock time is at or after `wall`: the instant itself when the
 * wall time occurs once, the earlier of the two when it occurs twice, and the moment the clocks
 * jump when it falls into a gap. Assumes at most one offset change within a day of `wall`.
 */
export function instantOfWall(zone: CalendarZone, wall: number): number {
  if (zone.isUtc || !Number.isFinite(wall)) return wall;
  // the offsets in force a day before and a day after (read at `wall` as if it were UTC, which is
  // off by at most the offset itself) bracket any change around the wanted instant
  const before = zone.offsetAt(wall - DAY);
  const after = zone.offsetAt(wall + DAY);
  // a larger offset gives an earlier instant: try that one first
  const first = before > after ? before : after;
  const second = before > after ? after : before;
  if (zone.offsetAt(wall - first) === first) return wall - first;
  if (zone.offsetAt(wall - second) === second) return wall - second;
  // a gap (after > before): the jump lies in (wall - after, wall - before]; find its first second
  let lo = wall - after;
  let hi = wall - before;
  if (!(lo < hi) || zone.offsetAt(lo) !== before) return wall - before;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (zone.offsetAt(mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Date.UTC, except that years 0–99 are those years, not 1900–1999. */
function utcMs(year: number, monthIndex: number, day: number): number {
  return year >= 100 || year < 0 ? Date.UTC(year, monthIndex, day) : new Date(0).setUTCFullYear(year, monthIndex, day);
}

/** Wall seconds of 00:00 on a calendar day. */
function wallMidnight(year: number, month: number, day: number): number {
  return utcMs(year, month - 1, day) / 1000;
}

// ---- ISO weeks and months ----------------------------------------------------------------------

/** ISO 8601 week number (1–53) of wall seconds. */
function isoWeekOfWall(wall: number): number {
  const date = new Date(Math.floor(wall / DAY) * DAY * 1000);
  const isoDay = (date.getUTCDay() + 6) % 7; // Monday = 0
  // the week belongs to the year of its Thursday
  date.setUTCDate(date.getUTCDate() - isoDay + 3);
  const thursday = date.getTime();
  const yearStart = utcMs(date.getUTCFullYear(), 0, 1);
  return 1 + Math.floor((thursday - yearStart) / (7 * DAY * 1000));
}

/** Monday = 1 … Sunday = 7, of wall seconds. */
function isoWeekdayOfWall(wall: number): number {
  const day = new Date(Math.floor(wall / DAY) * DAY * 1000).getUTCDay();
  return day === 0 ? 7 : day;
}

/** ISO 8601 week number (1–53) of a Unix timestamp in the zone. */
export function isoWeek(seconds: number, zone: CalendarZone = UTC_ZONE): number {
  return isoWeekOfWall(wallSeconds(zone, seconds));
}

/** Monday = 1 … Sunday = 7, in the zone. */
export function isoWeekday(seconds: number, zone: CalendarZone = UTC_ZONE): number {
  return isoWeekdayOfWall(wallSeconds(zone, seconds));
}

/**
 * Monday of the next ISO week numbered `week`, counting the reference's own week, at the
 * reference's local time of day (as the reference implementation kept it; a reference at local
 * midnight gives Monday 00:00). That wall time on the Monday resolves as instantOfWall does.
 * Returns null if no such week comes within 400 weeks (cannot happen for 1–53: week 53 recurs at
 * least every 6 years) or the result is beyond the calendar's range.
 */
export function mondayOfNextIsoWeek(
  week: number,
  referenceSeconds: number,
  zone: CalendarZone = UTC_ZONE,
): number | null {
  const wall = wallSeconds(zone, referenceSeconds);
  // the week number only changes on Mondays, so after the reference's own week step by weeks
  let monday = wall - (isoWeekdayOfWall(wall) - 1) * DAY;
  for (let i = 0; i < 400; i++, monday += 7 * DAY) {
    if (isoWeekOfWall(monday) === week) {
      const instant = instantOfWall(zone, monday);
      return isCalendarTimestamp(instant) ? instant : null;
    }
  }
  return null;
}

/**
 * 00:00 local time in the zone on the 1st of the next occurrence of `month` (1–12). A reference
 * inside that month, after that midnight, moves to the following year. Where the zone skips that
 * midnight (clocks jump forward at 00:00) it is the moment of the jump; where it repeats it, the
 * first of the two. Null beyond the calendar's range.
 */
export function nextStartOfMonth(
  month: number,
  referenceSeconds: number,
  zone: CalendarZone = UTC_ZONE,
): number | null {
  const ref = new Date(wallSeconds(zone, referenceSeconds) * 1000);
  const currentYear = ref.getUTCFullYear();
  const currentMonth = ref.getUTCMonth() + 1;
  const targetYear = currentMonth > month ? currentYear + 1 : currentYear;
  let first = instantOfWall(zone, wallMidnight(targetYear, month, 1));
  if (currentMonth === month && referenceSeconds > first)
    first = instantOfWall(zone, wallMidnight(targetYear + 1, month, 1));
  return isCalendarTimestamp(first) ? first : null;
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
 * Formats a Unix timestamp as local wall-clock time in the zone with date-fns style tokens
 * (yyyy yy MM M dd d HH hh mm m ss s a aa; there is no token for the zone or its offset). The format
 * is tokenised like date-fns: text in single quotes is literal ('' is a quote), letters without a
 * supported token are copied as they are, everything else is literal.
 */
export function formatDate(seconds: number, format: string, zone: CalendarZone = UTC_ZONE): string {
  const whole = Math.trunc(seconds);
  const date = new Date(wallSeconds(zone, whole) * 1000);
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
