import type { AppDeps } from "../../../deps";
import { participantAuth } from "../../../middleware/auth";
import { registerGetAssignedSurvey } from "./get-assigned-survey";
import { registerGetParticipantState } from "./get-participant-state";
import { registerListStudies } from "./list-studies";
import { createRouter } from "../../create-router";

/** What a signed-in participant reads: the studies of a profile, its state in one, survey definitions. */
export function createParticipantViewsRouter(deps: AppDeps) {
  const router = createRouter(participantAuth(deps));
  registerListStudies(router, deps);
  registerGetParticipantState(router, deps);
  registerGetAssignedSurvey(router, deps);
  return router;
}
