import type { AppDeps } from "../../../deps";
import { participantAuth } from "../../../middleware/auth";
import type { RateLimiter } from "../../../rate-limit";
import { registerConfidentialResponse } from "./confidential-response";
import { createParticipantFilesRouter } from "./files";
import { registerLinkingCode } from "./linking-code";
import { registerListSurveys } from "./list-surveys";
import { registerParticipantState } from "./participant-state";
import { registerReports } from "./reports";
import { registerResponses } from "./responses";
import { registerSubmissionHistory } from "./submission-history";
import { registerSurveyWithContext } from "./survey-with-context";
import { createRouter } from "../../create-router";

/**
 * case-backend's participant-data routes under /v1/study-service/participant-data; all need a
 * participant token, and every profile a request names must be the signed-in user's.
 */
export function createParticipantDataRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter(participantAuth(deps));
  registerSurveyWithContext(router, deps);
  router.route("/:studyKey/files", createParticipantFilesRouter(deps, limiter));
  registerListSurveys(router, deps);
  registerParticipantState(router, deps);
  registerSubmissionHistory(router, deps);
  registerResponses(router, deps);
  registerConfidentialResponse(router, deps);
  registerLinkingCode(router, deps);
  registerReports(router, deps);
  return router;
}
