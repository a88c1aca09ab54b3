import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { registerGetStudy } from "./get-study";
import { registerListParticipating } from "./list-participating";
import { registerListStudies } from "./list-studies";
import { registerVariables } from "./variables";
import { createRouter } from "../create-router";

/**
 * case-backend's study routes of the participant API under /v1/study-service/studies: the public
 * study list, one study and its variables (no token, as in case-backend), and the studies the
 * signed-in user's profiles take part in (participant token).
 */
export function createStudyServiceStudiesRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  void limiter;
  router.use("/participating", participantAuth(deps));
  registerListStudies(router, deps);
  // before /{studyKey}, which would take "participating" for a study key
  registerListParticipating(router, deps);
  registerGetStudy(router, deps);
  registerVariables(router, deps);
  return router;
}
