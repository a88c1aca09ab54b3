import type { AppDeps } from "../../../deps";
import { participantAuth } from "../../../middleware/auth";
import type { RateLimiter } from "../../../rate-limit";
import { registerCodeListAvailableCount } from "./code-list-available-count";
import { registerCodeListHasCode } from "./code-list-has-code";
import { registerGetStudy } from "./get-study";
import { registerListParticipating } from "./list-participating";
import { registerListStudies } from "./list-studies";
import { registerGetVariable } from "./get-variable";
import { registerListVariables } from "./list-variables";
import { createRouter } from "../../create-router";

/**
 * case-backend's study routes of the participant API under /v1/study-service/studies: the public
 * study list, one study, its variables and its code-list checks (no token, as in case-backend),
 * and the studies the signed-in user's profiles take part in (participant token).
 */
export function createStudyServiceStudiesRouter(deps: AppDeps, limiter: RateLimiter) {
  // Public but for /participating, whose token is checked for the path whatever the method (401 before 404)
  const router = createRouter();
  router.use("/participating", participantAuth(deps));
  registerListStudies(router, deps);
  // before /{studyKey}, which would take "participating" for a study key
  registerListParticipating(router, deps);
  registerGetStudy(router, deps);
  registerListVariables(router, deps);
  registerGetVariable(router, deps);
  registerCodeListHasCode(router, deps, limiter);
  registerCodeListAvailableCount(router, deps);
  return router;
}
