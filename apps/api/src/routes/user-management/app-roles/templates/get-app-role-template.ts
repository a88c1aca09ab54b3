import { z } from "@hono/zod-openapi";
import { readAppRoleTemplate } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../../user-management-contract";
import { caseAppRoleTemplateSchema, presentTemplate, templateIdParam } from "./app-role-template-schemas";

export function registerGetAppRoleTemplate(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Get an app role template (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      responses: {
        200: jsonContent(z.object({ appRoleTemplate: caseAppRoleTemplateSchema }), "the template"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      const template = await readAppRoleTemplate(deps.database.db, appRoleTemplateID);
      return c.json({ appRoleTemplate: presentTemplate(template) }, 200);
    },
  );
}
