import type { AppDeps } from "../../../../deps";
import { createRouter } from "../../../create-router";
import { registerAddManagementUserAppRole } from "./add-management-user-app-role";
import { registerListManagementUserAppRoles } from "./list-management-user-app-roles";
import { registerRemoveManagementUserAppRole } from "./remove-management-user-app-role";

/** A management user's app roles, at /v1/user-management/management-users/{userID}/app-roles. Admins only. */
export function createManagementUserAppRolesRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListManagementUserAppRoles(router, deps);
  registerAddManagementUserAppRole(router, deps);
  registerRemoveManagementUserAppRole(router, deps);
  return router;
}
