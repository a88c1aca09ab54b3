import { deleteServiceAccountApiKey } from "@studyflow/domain/access";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { accountKeyParams, successSchema } from "../service-account-schemas";

export function registerDeleteApiKey(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{apiKeyID}",
      tags: TAGS,
      summary: "Delete a service account's API key (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountKeyParams },
      responses: {
        200: jsonContent(successSchema, "deleted"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID, apiKeyID } = c.req.valid("param");
      await deleteServiceAccountApiKey(deps.database.db, serviceAccountID, apiKeyID, who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );
}
