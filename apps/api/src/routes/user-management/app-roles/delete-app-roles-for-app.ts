import { z } from "@hono/zod-openapi";
import { deleteAppRolesForApp } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, now } from "../user-management-contract";

export function registerDeleteAppRolesForApp(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/delete/{appName}",
      tags: TAGS,
      summary: "Remove every app role of an app (CASE, admin)",
      description:
        "Removes the app's roles from every subject in one transaction; the app's templates and the permissions " +
        "the roles granted stay (as case-backend). An app without roles answers the same. Audited " +
        "`app-role.delete-for-app`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ appName: idParam("appName", "the app's name") }) },
      responses: {
        200: jsonContent(messageSchema, "removed: `app roles deleted`"),
        ...errorResponses([400, 401, 403], { 400: "blank app name", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      await deleteAppRolesForApp(deps.database.db, c.req.valid("param").appName, who.subject, now(deps));
      return c.json({ message: "app roles deleted" }, 200);
    },
  );
}
