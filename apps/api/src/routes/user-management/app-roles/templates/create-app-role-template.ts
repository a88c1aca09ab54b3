import { createAppRoleTemplate } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { caseAppRoleTemplateSchema, presentTemplate, templateBody } from "./app-role-template-schemas";

export function registerCreateAppRoleTemplate(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: TAGS,
      summary: "Create an app role template (CASE, admin)",
      description: "One template per app and role (409 for a second).",
      security: MANAGEMENT_SECURITY,
      caseBody: templateBody,
      bothSlashes: true,
      responses: {
        200: jsonContent(messageSchema.extend({ appRoleTemplate: caseAppRoleTemplateSchema }), "created"),
        ...errorResponses([400, 401, 403, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const row = await createAppRoleTemplate(deps.database.db, c.req.valid("json"), who.subject, now(deps));
      return c.json({ message: "app role template created", appRoleTemplate: presentTemplate(row) }, 200);
    },
  );
}
