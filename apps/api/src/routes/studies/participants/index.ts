import type { AppDeps } from "../../../deps";
import { registerCreateVirtualParticipant } from "./create-virtual-participant";
import { registerListParticipantResponses } from "./list-participant-responses";
import { registerMergeParticipants } from "./merge-participants";
import { registerParticipantEvent } from "./participant-event";
import { registerRemoveSession } from "./remove-session";
import { registerSubmitReport } from "./submit-report";
import { registerSubmitResponse } from "./submit-response";
import { registerUpdateReport } from "./update-report";
import { registerUpdateParticipant } from "./update-participant";
import { createRouter } from "../../create-router";

/** A study's participants, as researchers act on them. */
export function createParticipantsRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  registerCreateVirtualParticipant(router, deps);
  registerMergeParticipants(router, deps);
  registerSubmitResponse(router, deps);
  registerListParticipantResponses(router, deps);
  registerUpdateParticipant(router, deps);
  registerParticipantEvent(router, deps);
  registerRemoveSession(router, deps);
  registerSubmitReport(router, deps);
  registerUpdateReport(router, deps);
  return router;
}
