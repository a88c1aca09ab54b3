/**
 * Which failures mean "the database is out of reach for now" rather than "this query is wrong".
 * A caller answers the first kind as temporarily unavailable (HTTP 503, a retried batch) and the
 * second as the bug or bad input it is.
 */

/** The driver's own connection failures (postgres.js `code`) and the socket errors under them. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs the server sends when it goes away or will not take us now: class 08 (connection
 * exception), 57P01 admin shutdown (a terminated backend, a restart), 57P02 crash shutdown,
 * 57P03 cannot connect now (starting up, in recovery), 53300 too many connections.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300";
}

/** The error and its causes (drizzle wraps the driver's error as `cause`), outermost first. */
function* causeChain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  for (let current = error; current !== undefined && current !== null && !seen.has(current);) {
    seen.add(current);
    yield current;
    current = typeof current === "object" && "cause" in current ? current.cause : undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

/** True when the failure is the database connection lost or refused, not the statement. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const link of causeChain(error)) {
    const code = codeOf(link);
    if (code !== undefined && (CONNECTION_CODES.has(code) || isUnavailableSqlState(code))) return true;
  }
  return false;
}

/** SQLSTATE 23505: an insert or update ran into a unique index. */
const UNIQUE_VIOLATION = "23505";

/**
 * Whether `error` is a unique violation, as the driver reports it or as the query builder wraps
 * it (drizzle puts the driver's error in `cause`); with `constraint`, of that index only. The
 * domain turns one into the Conflict it means; nothing above the domain needs to know the code.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    const { code, constraint_name: name } = current as { code?: unknown; constraint_name?: unknown };
    if (code === UNIQUE_VIOLATION) return constraint === undefined || name === constraint;
  }
  return false;
}
