import type { AppDeps } from "../../../../deps";
import { createRouter } from "../../../create-router";
import { registerCreateAppRoleTemplate } from "./create-app-role-template";
import { registerDeleteAppRoleTemplate } from "./delete-app-role-template";
import { registerDeleteAppRoleTemplatesForApp } from "./delete-app-role-templates-for-app";
import { registerGetAppRoleTemplate } from "./get-app-role-template";
import { registerListAppRoleTemplates } from "./list-app-role-templates";
import { registerUpdateAppRoleTemplate } from "./update-app-role-template";

/**
 * App role templates at /v1/user-management/app-roles/templates: a role of an app and the
 * permissions it grants. Admins only. The fixed paths (`delete/…`, `delete-for-app/…`) are
 * registered before `{appRoleTemplateID}`.
 */
export function createAppRoleTemplatesRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListAppRoleTemplates(router, deps);
  registerCreateAppRoleTemplate(router, deps);
  registerDeleteAppRoleTemplate(router, deps);
  registerDeleteAppRoleTemplatesForApp(router, deps);
  registerGetAppRoleTemplate(router, deps);
  registerUpdateAppRoleTemplate(router, deps);
  return router;
}
