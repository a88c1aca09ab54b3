import { z } from "@hono/zod-openapi";
import { listAppRoleTemplates } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../../user-management-contract";
import { caseAppRoleTemplateSchema, presentTemplate } from "./app-role-template-schemas";

export function registerListAppRoleTemplates(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List app role templates (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ appRoleTemplates: z.array(caseAppRoleTemplateSchema) }), "the templates"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ appRoleTemplates: (await listAppRoleTemplates(deps.database.db)).map(presentTemplate) }, 200);
    },
  );
}
