import { z } from "@hono/zod-openapi";
import { addManagementUserAppRole } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { caseAppRoleSchema, presentAppRole } from "../../app-roles/app-role-schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, now } from "../../user-management-contract";

export function registerAddManagementUserAppRole(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Give a management user the role of a template (CASE, admin)",
      description:
        "Adds the role and grants each of the template's permissions the user lacks, in one transaction. Unknown " +
        "user: 400 `user not found` (as case-backend); unknown template: 404; a role the user has: 409.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({
          userID: idParam("userID", "the management user's id"),
          appRoleTemplateID: idParam("appRoleTemplateID", "the app role template's id"),
        }),
      },
      responses: {
        200: jsonContent(messageSchema.extend({ appRole: caseAppRoleSchema }), "added: `user app role added`"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, appRoleTemplateID } = c.req.valid("param");
      const { appRole } = await addManagementUserAppRole(
        deps.database.db,
        userID,
        appRoleTemplateID,
        who.subject,
        now(deps),
      );
      return c.json({ message: "user app role added", appRole: presentAppRole(appRole) }, 200);
    },
  );
}
