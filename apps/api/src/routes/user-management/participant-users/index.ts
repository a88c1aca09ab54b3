import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerRequestParticipantUserDeletion } from "./request-participant-user-deletion";

/** Participant accounts as case-admin removes them, at /v1/user-management/participant-users. */
export function createParticipantUsersRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerRequestParticipantUserDeletion(router, deps);
  return router;
}
