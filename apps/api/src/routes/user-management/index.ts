import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import {
  registerDeleteManagementUser,
  registerGetManagementUser,
  registerListManagementUsers,
} from "./management-users";
import { registerRequestParticipantUserDeletion } from "./participant-users";
import { registerServiceAccountRoutes } from "./service-accounts";
import { registerSubjectPermissionRoutes } from "./subject-permissions";
import { registerAppRoleRoutes, registerAppRoleTemplateRoutes, registerManagementUserAppRoleRoutes } from "./app-roles";
import { createRouter } from "../create-router";

/** One operation of this router: a file of this folder exporting it (`registerListManagementUsers`, …). */
export type UserManagementOperation = (router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) => void;

/**
 * The operations, in registration order: a new one is a file here and one line in this list.
 * Register a fixed path before a parameter path that would take it (`app-roles/templates` before
 * `app-roles/{id}`).
 */
const OPERATIONS: readonly UserManagementOperation[] = [
  registerAppRoleTemplateRoutes,
  registerAppRoleRoutes,
  registerRequestParticipantUserDeletion,
  registerListManagementUsers,
  registerGetManagementUser,
  registerDeleteManagementUser,
  (router, deps) => registerSubjectPermissionRoutes(router, deps, "management-user"),
  registerManagementUserAppRoleRoutes,
  registerServiceAccountRoutes,
  (router, deps) => registerSubjectPermissionRoutes(router, deps, "service-account"),
];

/**
 * case-backend's user-management group (services/management-api, user-management.go) at
 * /v1/user-management: management users, their permissions and app roles, app-role templates,
 * service accounts and their API keys and permissions, participant-account deletion requests.
 * Every path needs a management token or API key (401 before 404); most need an admin (403).
 */
export function createUserManagementRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  router.use(managementAuth(deps));
  for (const register of OPERATIONS) register(router, deps, limiter);
  return router;
}
