import type { Context } from "hono";
import { DomainError, type DomainErrorKind } from "@studyflow/domain";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { errorBody, handleError } from "../errors";

/**
 * The status of each domain error on a CASE-shaped route. case-backend answers most failures with
 * 400 (bad input) or 500 (anything the database said, an unknown id included); CASE clients test
 * only `status !== 200`, so any 4xx serves them, and studyflow keeps the precise statuses:
 * deliberate differences from case-backend, listed so that a reader knows them:
 * - not-found: 404 where case-backend answers 500 ("failed to get study response by ID");
 * - conflict: 409 where case-backend answers 500 (a duplicate key);
 * - rule-failed: 422; case-backend has no such failure (its rules never reject an event), so no
 *   CASE client expects it; no data-explorer route can raise it.
 * Everything else (invalid 400, unauthorized 401, forbidden 403, 413, 429, 503) is the same.
 */
export const CASE_STATUS_OF: Record<DomainErrorKind, ContentfulStatusCode> = {
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

/** The onError of CASE-shaped routers: CASE_STATUS_OF for domain errors, the app's handler for the rest. */
export function handleCaseError(error: Error, c: Context<AppEnv>): Response {
  if (error instanceof DomainError && error.kind !== "rate-limited" && error.kind !== "unavailable") {
    return c.json(errorBody(error.message), CASE_STATUS_OF[error.kind]);
  }
  return handleError(error, c);
}
