import { z } from "@hono/zod-openapi";
import { deleteAppRoleTemplatesForApp } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, now } from "../../user-management-contract";

export function registerDeleteAppRoleTemplatesForApp(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/delete-for-app/{appName}",
      tags: TAGS,
      summary: "Delete every template and app role of an app (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ appName: idParam("appName", "the app's name") }) },
      responses: {
        200: jsonContent(messageSchema, "deleted: `app role template deleted`"),
        ...errorResponses([400, 401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appName } = c.req.valid("param");
      await deleteAppRoleTemplatesForApp(deps.database.db, appName, who.subject, now(deps));
      return c.json({ message: "app role template deleted" }, 200);
    },
  );
}
