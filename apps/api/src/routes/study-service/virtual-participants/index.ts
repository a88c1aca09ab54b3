import type { AppDeps } from "../../../deps";
import { participantAuth } from "../../../middleware/auth";
import type { RateLimiter } from "../../../rate-limit";
import { createRouter } from "../../create-router";
import { registerFindVirtualParticipants } from "./find-virtual-participants";

/** What a signed-in participant may learn of a study's virtual participants before claiming one. */
export function createVirtualParticipantsRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter(participantAuth(deps));
  registerFindVirtualParticipants(router, deps, limiter);
  return router;
}
