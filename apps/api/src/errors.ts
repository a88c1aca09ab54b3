import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDatabaseUnavailable } from "@studyflow/db";
import { DomainError, RateLimited, Unavailable, type DomainErrorKind } from "@studyflow/domain/errors";
import { loggerOf, type AppEnv } from "./app-env";

/**
 * The status of each domain error, on every route, CASE-shaped ones included. case-backend answers
 * most failures with 400 (bad input) or 500 (anything the database said, an unknown id included);
 * CASE clients test only `status !== 200`, so any 4xx serves them, and studyflow keeps the precise
 * statuses. Deliberate differences from case-backend, listed so that a reader knows them:
 * - not-found: 404 where case-backend answers 500 ("failed to get study response by ID");
 * - conflict: 409 where case-backend answers 500 (a duplicate key);
 * - rule-failed: 422; case-backend has no such failure (its rules never reject an event), so no
 *   CASE client expects it; no data-explorer route can raise it.
 * Everything else (invalid 400, unauthorized 401, forbidden 403, 413, 429, 503) is the same.
 */
export const STATUS_OF: Record<DomainErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  "rule-failed": 422,
  "payload-too-large": 413,
  "rate-limited": 429,
  unavailable: 503,
};

export function errorBody(message: string) {
  return { error: message };
}

/** The one place where anything thrown becomes an HTTP answer. Internals never leave. */
export function handleError(error: Error, c: Context<AppEnv>): Response {
  if (error instanceof DomainError) {
    if (error instanceof RateLimited || error instanceof Unavailable) {
      c.header("Retry-After", String(error.retryAfterSeconds));
    }
    if (error instanceof Unavailable) loggerOf(c).warn({ err: error }, "dependency unavailable");
    return c.json(errorBody(error.message), STATUS_OF[error.kind]);
  }
  if (isDatabaseUnavailable(error)) {
    // (Checked after DomainError: a domain error may carry a database error as its cause.)
    // Lost or refused connection. A participant event whose COMMIT went unanswered is reported
    // apart (CommitOutcomeUnknown); other writes are safe to repeat or refuse a repeat themselves.
    return handleError(new Unavailable("the database is unavailable; try again shortly", { cause: error }), c);
  }
  if (error instanceof HTTPException) {
    const status = error.status;
    if (status >= 500) loggerOf(c).error({ err: error }, "http exception");
    const message = status === 413 ? "request body too large" : error.message || "request failed";
    return c.json(errorBody(message), status);
  }
  loggerOf(c).error({ err: error }, "unhandled error");
  return c.json(errorBody(`internal error (request id ${c.get("requestId")})`), 500);
}
