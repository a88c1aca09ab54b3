import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { createAppRolesRouter } from "./app-roles";
import { createManagementUsersRouter } from "./management-users";
import { createParticipantUsersRouter } from "./participant-users";
import { createServiceAccountsRouter } from "./service-accounts";

/**
 * case-backend's user-management group (services/management-api, user-management.go) at
 * /v1/user-management: management users, their permissions and app roles, app-role templates,
 * service accounts and their API keys and permissions, participant-account deletion requests.
 * Every path needs a management token or API key (401 before 404); most need an admin (403).
 * The sub-routers are mounted in the order the OpenAPI document lists their paths.
 */
export function createUserManagementRouter(deps: AppDeps, _limiter: RateLimiter) {
  const router = createRouter(managementAuth(deps));
  router.route("/app-roles", createAppRolesRouter(deps));
  router.route("/participant-users", createParticipantUsersRouter(deps));
  router.route("/management-users", createManagementUsersRouter(deps));
  router.route("/service-accounts", createServiceAccountsRouter(deps));
  return router;
}
