import { z } from "@hono/zod-openapi";
import { listAppRoles } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../user-management-contract";
import { caseAppRoleSchema, presentAppRole } from "./app-role-schemas";

export function registerListAppRoles(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List every app role (CASE, admin)",
      description: "The app roles of every management user and service account, by app, role and age.",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ appRoles: z.array(caseAppRoleSchema) }), "the roles"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ appRoles: (await listAppRoles(deps.database.db)).map(presentAppRole) }, 200);
    },
  );
}
