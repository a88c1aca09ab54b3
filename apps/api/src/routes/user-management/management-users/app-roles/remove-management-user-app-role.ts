import { z } from "@hono/zod-openapi";
import { removeManagementUserAppRole } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, now } from "../../user-management-contract";

export function registerRemoveManagementUserAppRole(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{appRoleID}",
      tags: TAGS,
      summary: "Remove a management user's app role (CASE, admin)",
      description: "The permissions the role granted stay (as case-backend).",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({
          userID: idParam("userID", "the management user's id"),
          appRoleID: idParam("appRoleID", "the app role's id"),
        }),
      },
      responses: {
        200: jsonContent(messageSchema, "removed: `user app role deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, appRoleID } = c.req.valid("param");
      await removeManagementUserAppRole(deps.database.db, userID, appRoleID, who.subject, now(deps));
      return c.json({ message: "user app role deleted" }, 200);
    },
  );
}
