import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { createStudyEventsRouter } from "./events";
import { createParticipantViewsRouter } from "./participant";
import { createParticipantDataRouter } from "./participant-data";
import { createStudyServiceStudiesRouter } from "./studies";
import { createTemporaryParticipantsRouter } from "./temp-participant";
import { createVirtualParticipantsRouter } from "./virtual-participants";

/**
 * case-backend's participant-facing study service. No auth of its own: temp-participant is public
 * and studies public but for /participating, so each sub-router brings its own.
 */
export function createStudyServiceRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  // the OpenAPI document lists the operations in this order
  router.route("/events", createStudyEventsRouter(deps, limiter));
  router.route("/temp-participant", createTemporaryParticipantsRouter(deps, limiter));
  router.route("/participant", createParticipantViewsRouter(deps));
  router.route("/participant-data", createParticipantDataRouter(deps, limiter));
  router.route("/studies", createStudyServiceStudiesRouter(deps, limiter));
  router.route("/virtual-participants", createVirtualParticipantsRouter(deps, limiter));
  return router;
}
