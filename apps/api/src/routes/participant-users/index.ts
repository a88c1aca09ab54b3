import { createMiddleware } from "hono/factory";
import { Forbidden } from "@studyflow/domain/errors";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { createAccountDeletionsRouter } from "./deletions";
import { registerDeleteParticipantUser } from "./delete-participant-user";
import { registerFindParticipantUser } from "./find-participant-user";
import { registerGetParticipantUser } from "./get-participant-user";
import { registerLockParticipantUser } from "./lock-participant-user";
import { registerSignOutParticipantUser } from "./sign-out-participant-user";
import { registerUnlockParticipantUser } from "./unlock-participant-user";

/** Participant accounts are the instance's, not a study's: only admins manage them. */
const adminOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!managementOf(c).isAdmin) throw new Forbidden("managing participant accounts needs an admin token");
  await next();
});

/**
 * Operators' view of participant accounts under /v1/participant-users: find by e-mail, lock,
 * unlock, sign out everywhere, delete, and the deletions under way. Admin management tokens only;
 * every change is audited.
 */
export function createParticipantUsersRouter(deps: AppDeps, limiter: RateLimiter) {
  void limiter;
  const router = createRouter(managementAuth(deps));
  router.use(adminOnly);
  // before /{id}: "deletions" is no account id
  router.route("/deletions", createAccountDeletionsRouter(deps));
  registerFindParticipantUser(router, deps);
  registerGetParticipantUser(router, deps);
  registerLockParticipantUser(router, deps);
  registerUnlockParticipantUser(router, deps);
  registerSignOutParticipantUser(router, deps);
  registerDeleteParticipantUser(router, deps);
  return router;
}
