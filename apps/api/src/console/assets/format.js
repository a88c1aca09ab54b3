// @ts-check
// How numbers, instants and durations read on the console's pages.

const numbers = new Intl.NumberFormat("en");

/** @param {number} value */
export function count(value) {
  return numbers.format(value);
}

/**
 * An ISO 8601 instant in the reader's time zone, to the second; "—" for none.
 * @param {string | null | undefined} iso
 */
export function instant(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString("en-GB", {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/**
 * A duration as people say it: "850 ms", "12.4 s", "3 min 5 s", "2 h 10 min".
 * @param {number} ms
 */
export function duration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3_600)} h ${Math.floor((seconds % 3_600) / 60)} min`;
}

/**
 * The time between two ISO instants; "—" unless both are there.
 * @param {string | null | undefined} from
 * @param {string | null | undefined} to
 */
export function between(from, to) {
  if (!from || !to) return "—";
  return duration(Date.parse(to) - Date.parse(from));
}

/**
 * `part` of `whole` (above 0) in whole percent, never 100 before it is all.
 * @param {number} part
 * @param {number} whole
 */
export function percent(part, whole) {
  const value = Math.floor((part / whole) * 100);
  return part < whole ? Math.min(value, 99) : 100;
}
