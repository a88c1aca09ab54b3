import type { AppDeps } from "../../../deps";
import { participantAuth } from "../../../middleware/auth";
import type { RateLimiter } from "../../../rate-limit";
import { registerCustomEvent } from "./custom-event";
import { registerEnterStudy } from "./enter-study";
import { registerLeaveStudy } from "./leave-study";
import { registerMergeTemporaryParticipant } from "./merge-temporary-participant";
import { registerMergeVirtualParticipant } from "./merge-virtual-participant";
import { registerSubmitResponse } from "./submit-response";
import { createRouter } from "../../create-router";

/** What a signed-in participant does in a study, for one of the user's profiles. */
export function createStudyEventsRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter(participantAuth(deps));
  registerEnterStudy(router, deps);
  registerLeaveStudy(router, deps);
  registerMergeTemporaryParticipant(router, deps, limiter);
  registerMergeVirtualParticipant(router, deps, limiter);
  registerSubmitResponse(router, deps);
  registerCustomEvent(router, deps);
  return router;
}
