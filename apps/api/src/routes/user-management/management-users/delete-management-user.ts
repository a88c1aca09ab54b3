import { removeManagementUser } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now, userIdParam } from "../user-management-contract";

export function registerDeleteManagementUser(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{userID}",
      tags: TAGS,
      summary: "Delete a management user (CASE, admin)",
      description:
        "Deletes the user with their sessions, permissions and app roles in one transaction and ends every token " +
        "minted for them. An admin cannot delete themselves (400).",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: jsonContent(messageSchema, "deleted: `user deleted`"),
        ...errorResponses([400, 401, 403, 404], { 400: "user cannot delete itself", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID } = c.req.valid("param");
      await removeManagementUser(deps.database.db, userID, who.subject, now(deps));
      return c.json({ message: "user deleted" }, 200);
    },
  );
}
