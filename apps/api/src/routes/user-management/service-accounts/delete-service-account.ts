import { deleteServiceAccount } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../user-management-contract";
import { accountIdParam, successSchema } from "./service-account-schemas";

export function registerDeleteServiceAccount(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{serviceAccountID}",
      tags: TAGS,
      summary: "Delete a service account (CASE, admin)",
      description: "Deletes the account with its API keys (they stop working at once), permissions and app roles.",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      responses: {
        200: jsonContent(successSchema, "deleted"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      await deleteServiceAccount(deps.database.db, serviceAccountID, who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );
}
