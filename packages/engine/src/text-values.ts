// Text the engine writes must be storable and readable by every client: PostgreSQL rejects NUL
// (U+0000) in text and jsonb, and a lone UTF-16 surrogate is no character at all (JSON parsers
// and PostgreSQL refuse it). Rule arguments are checked when the rules are uploaded, but values
// computed at run time (response values, event payloads, external replies) reach the writes
// unchecked; an action that would write such text fails instead.

/** What in `text` cannot be stored ("a NUL character (U+0000)"), or null. */
function unstorableIn(text: string): string | null {
  if (text.includes("\u0000")) return "a NUL character (U+0000)";
  if (!text.isWellFormed()) return "a lone UTF-16 surrogate";
  return null;
}

/** Why `text` cannot be stored, or null. */
export function textProblem(text: string): string | null {
  const unstorable = unstorableIn(text);
  return unstorable === null ? null : `contains ${unstorable}`;
}

/** Why text received from outside cannot be accepted ("must not contain …"), or null. */
export function inputTextProblem(text: string): string | null {
  const unstorable = unstorableIn(text);
  return unstorable === null ? null : `must not contain ${unstorable}`;
}

export interface JsonInputLimits {
  /** Nesting deeper than this is refused (no validator after the check recurses deeper). */
  maxDepth: number;
  /** The message for a document nested too deep. */
  tooDeep: string;
  /** Refuse numbers that are not finite (they have no JSON form). */
  finiteNumbers?: boolean;
}

/**
 * The first problem of a JSON document received from outside (a request body, an uploaded
 * file), with its path under `where`: text PostgreSQL cannot store, in a key or a value, nesting
 * deeper than the limit, a number that is not finite. Nearly every document has none: it is walked
 * once without building a path for each value (hasJsonInputProblem), and again, naming the path,
 * only when that walk finds one.
 */
export function jsonInputProblem(root: unknown, where: string, limits: JsonInputLimits): string | null {
  return hasJsonInputProblem(root, 0, limits) ? firstJsonInputProblem(root, where, limits) : null;
}

/**
 * Whether firstJsonInputProblem finds a problem in `value` at `depth`. It recurses at most
 * `limits.maxDepth` levels: deeper nesting is itself the problem, found before descending.
 */
function hasJsonInputProblem(value: unknown, depth: number, limits: JsonInputLimits): boolean {
  if (typeof value === "string") return unstorableIn(value) !== null;
  if (typeof value === "number") return limits.finiteNumbers === true && !Number.isFinite(value);
  if (value === null || typeof value !== "object") return false;
  if (depth >= limits.maxDepth) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (hasJsonInputProblem(item, depth + 1, limits)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (unstorableIn(key) !== null || hasJsonInputProblem(record[key], depth + 1, limits)) return true;
  }
  return false;
}

/** jsonInputProblem's answer, found by a walk that names each value's path; without recursion. */
export function firstJsonInputProblem(root: unknown, where: string, limits: JsonInputLimits): string | null {
  const pending: Array<[value: unknown, path: string, depth: number]> = [[root, where, 0]];
  while (pending.length > 0) {
    const [value, path, depth] = pending.pop() as [unknown, string, number];
    if (typeof value === "string") {
      const problem = inputTextProblem(value);
      if (problem) return `${path} ${problem}`;
      continue;
    }
    if (limits.finiteNumbers && typeof value === "number" && !Number.isFinite(value)) {
      return `${path} must be a finite number`;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= limits.maxDepth) return limits.tooDeep;
    if (Array.isArray(value)) {
      value.forEach((item, i) => pending.push([item, `${path}[${i}]`, depth + 1]));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = inputTextProblem(key);
      if (problem) return `a key of ${path} ${problem}`;
      pending.push([item, `${path}.${key}`, depth + 1]);
    }
  }
  return null;
}

/** The first string (key or value) anywhere in `value` that cannot be stored, with where it is. */
export function firstTextProblem(value: unknown, where: string): string | null {
  const pending: Array<[unknown, string]> = [[value, where]];
  while (pending.length > 0) {
    const [current, path] = pending.pop() as [unknown, string];
    if (typeof current === "string") {
      const problem = textProblem(current);
      if (problem) return `${path} ${problem}`;
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => pending.push([item, `${path}[${i}]`]));
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        const keyProblem = textProblem(key);
        if (keyProblem) return `a key of ${path} ${keyProblem}`;
        pending.push([item, `${path}.${key}`]);
      }
    }
  }
  return null;
}

/** UTF-16 code units reordered so that comparing them gives code point (= UTF-8 byte) order. */
function codePointWeight(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** -1, 0 or 1 like Go's strings.Compare. */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointWeight(x) < codePointWeight(y) ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
