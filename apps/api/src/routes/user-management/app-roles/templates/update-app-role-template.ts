import { updateAppRoleTemplate } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { caseAppRoleTemplateSchema, presentTemplate, templateBody, templateIdParam } from "./app-role-template-schemas";

export function registerUpdateAppRoleTemplate(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "put",
      path: "/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Update an app role template (CASE, admin)",
      description: "Roles given from it earlier, and the permissions they granted, stay as they are.",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      caseBody: templateBody,
      responses: {
        200: jsonContent(messageSchema.extend({ appRoleTemplate: caseAppRoleTemplateSchema }), "updated"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      const input = c.req.valid("json");
      const row = await updateAppRoleTemplate(deps.database.db, appRoleTemplateID, input, who.subject, now(deps));
      return c.json({ message: "app role template updated", appRoleTemplate: presentTemplate(row) }, 200);
    },
  );
}
