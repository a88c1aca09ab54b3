import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import { validationHook } from "../../validation";
import { registerGetAssignedSurvey } from "./get-assigned-survey";
import { registerGetParticipantState } from "./get-participant-state";
import { registerListStudies } from "./list-studies";

/** What a signed-in participant reads: the studies of a profile, its state in one, survey definitions. */
export function createParticipantViewsRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(participantAuth(deps));
  registerListStudies(router, deps);
  registerGetParticipantState(router, deps);
  registerGetAssignedSurvey(router, deps);
  return router;
}
