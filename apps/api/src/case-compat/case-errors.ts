import type { DomainErrorKind } from "@studyflow/domain";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { STATUS_OF, handleError } from "../errors";

/**
 * The status of each domain error on a CASE-shaped route: the app's own table. case-backend
 * answers most failures with 400 (bad input) or 500 (anything the database said, an unknown id
 * included); CASE clients test only `status !== 200`, so any 4xx serves them, and studyflow keeps
 * the precise statuses. Deliberate differences from case-backend, listed so that a reader knows them:
 * - not-found: 404 where case-backend answers 500 ("failed to get study response by ID");
 * - conflict: 409 where case-backend answers 500 (a duplicate key);
 * - rule-failed: 422; case-backend has no such failure (its rules never reject an event), so no
 *   CASE client expects it; no data-explorer route can raise it.
 * Everything else (invalid 400, unauthorized 401, forbidden 403, 413, 429, 503) is the same.
 */
export const CASE_STATUS_OF: Record<DomainErrorKind, ContentfulStatusCode> = STATUS_OF;

/**
 * The onError of CASE-shaped routers. The statuses are the app's, so it is the app's handler; the
 * name stays so that a CASE router says which answers it gives on purpose.
 */
export const handleCaseError = handleError;
