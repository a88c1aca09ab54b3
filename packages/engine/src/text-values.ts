// Text the engine writes must be storable and readable by every client: PostgreSQL rejects NUL
// (U+0000) in text and jsonb, and a lone UTF-16 surrogate is no character at all (JSON parsers
// and PostgreSQL refuse it). Rule arguments are checked when the rules are uploaded, but values
// computed at run time (response values, event payloads, external replies) reach the writes
// unchecked; an action that would write such text fails instead.

/** Why `text` cannot be stored, or null. */
export function textProblem(text: string): string | null {
  if (text.includes("\u0000")) return "contains a NUL character (U+0000)";
  if (!text.isWellFormed()) return "contains a lone UTF-16 surrogate";
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
