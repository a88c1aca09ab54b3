import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerGetAccountDeletion } from "./get-account-deletion";
import { registerListAccountDeletions } from "./list-account-deletions";

/** Account deletions under way. No auth of its own: the participant-users router's covers it. */
export function createAccountDeletionsRouter(deps: AppDeps) {
  const router = createRouter();
  registerListAccountDeletions(router, deps);
  registerGetAccountDeletion(router, deps);
  return router;
}
