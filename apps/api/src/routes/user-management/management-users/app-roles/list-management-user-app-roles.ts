import { z } from "@hono/zod-openapi";
import { listManagementUserAppRoles } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { caseAppRoleSchema, presentAppRole } from "../../app-roles/app-role-schemas";
import { ADMIN_ONLY, TAGS, adminOf, userIdParam } from "../../user-management-contract";

export function registerListManagementUserAppRoles(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List a management user's app roles (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: jsonContent(z.object({ appRoles: z.array(caseAppRoleSchema) }), "the roles"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { userID } = c.req.valid("param");
      const roles = await listManagementUserAppRoles(deps.database.db, userID);
      return c.json({ appRoles: roles.map(presentAppRole) }, 200);
    },
  );
}
