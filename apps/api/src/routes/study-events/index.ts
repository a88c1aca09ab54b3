import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerCustomEvent } from "./custom-event";
import { registerEnterStudy } from "./enter-study";
import { registerLeaveStudy } from "./leave-study";
import { registerMergeTemporaryParticipant } from "./merge-temporary-participant";
import { registerSubmitResponse } from "./submit-response";

/** What a signed-in participant does in a study, for one of the user's profiles. */
export function createStudyEventsRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(participantAuth(deps));
  registerEnterStudy(router, deps);
  registerLeaveStudy(router, deps);
  registerMergeTemporaryParticipant(router, deps, limiter);
  registerSubmitResponse(router, deps);
  registerCustomEvent(router, deps);
  return router;
}
