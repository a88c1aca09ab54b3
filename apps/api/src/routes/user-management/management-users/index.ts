import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { createSubjectPermissionsRouter } from "../permissions";
import { createManagementUserAppRolesRouter } from "./app-roles";
import { registerDeleteManagementUser } from "./delete-management-user";
import { registerGetManagementUser } from "./get-management-user";
import { registerListManagementUsers } from "./list-management-users";

/**
 * Management users at /v1/user-management/management-users: the staff signed in to the management
 * API, their permissions and their app roles.
 */
export function createManagementUsersRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListManagementUsers(router, deps);
  registerGetManagementUser(router, deps);
  registerDeleteManagementUser(router, deps);
  router.route("/:userID/permissions", createSubjectPermissionsRouter(deps, "management-user"));
  router.route("/:userID/app-roles", createManagementUserAppRolesRouter(deps));
  return router;
}
