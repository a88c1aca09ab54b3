import type { AppDeps } from "../../../deps";
import { managementAuth } from "../../../middleware/auth";
import { registerSubmitResponse } from "./submit-response";
import { registerUpdateParticipant } from "./update-participant";
import { createRouter } from "../../create-router";

/** A study's participants, as researchers act on them. */
export function createParticipantsRouter(deps: AppDeps) {
  const router = createRouter(managementAuth(deps));
  registerSubmitResponse(router, deps);
  registerUpdateParticipant(router, deps);
  return router;
}
