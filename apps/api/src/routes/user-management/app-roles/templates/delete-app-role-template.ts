import { deleteAppRoleTemplate } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { templateIdParam } from "./app-role-template-schemas";

export function registerDeleteAppRoleTemplate(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/delete/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Delete an app role template and the roles made from it (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      responses: {
        200: jsonContent(messageSchema, "deleted: `app role template deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      await deleteAppRoleTemplate(deps.database.db, appRoleTemplateID, who.subject, now(deps));
      return c.json({ message: "app role template deleted" }, 200);
    },
  );
}
