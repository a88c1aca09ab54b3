import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerDeleteAppRolesForApp } from "./delete-app-roles-for-app";
import { registerListAppRoles } from "./list-app-roles";
import { createAppRoleTemplatesRouter } from "./templates";

/**
 * Every subject's app roles at /v1/user-management/app-roles (case-backend's `/app-roles/` group),
 * with the templates they are made from. Admins only.
 */
export function createAppRolesRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  router.route("/templates", createAppRoleTemplatesRouter(deps));
  registerListAppRoles(router, deps);
  registerDeleteAppRolesForApp(router, deps);
  return router;
}
