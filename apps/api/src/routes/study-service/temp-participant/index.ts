import type { AppDeps } from "../../../deps";
import type { RateLimiter } from "../../../rate-limit";
import { registerGetTemporaryParticipantSurvey } from "./get-temporary-participant-survey";
import { registerListTemporaryParticipantSurveys } from "./list-temporary-participant-surveys";
import { registerTemporaryParticipantRegistration } from "./register-temporary-participant";
import { registerSubmitTemporaryParticipantResponse } from "./submit-temporary-participant-response";
import { createRouter } from "../../create-router";

/** Anonymous participants (CASE's temp-participant routes): public, so every operation is rate-limited instead of authenticated. */
export function createTemporaryParticipantsRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  registerTemporaryParticipantRegistration(router, deps, limiter);
  registerListTemporaryParticipantSurveys(router, deps, limiter);
  registerGetTemporaryParticipantSurvey(router, deps, limiter);
  registerSubmitTemporaryParticipantResponse(router, deps, limiter);
  return router;
}
