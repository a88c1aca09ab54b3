import { updateServiceAccount } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../user-management-contract";
import { accountIdParam, accountProps, successSchema } from "./service-account-schemas";

export function registerUpdateServiceAccount(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "put",
      path: "/{serviceAccountID}",
      tags: TAGS,
      summary: "Update a service account's label and description (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      caseBody: accountProps,
      responses: {
        200: jsonContent(successSchema, "updated"),
        ...errorResponses([400, 401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      await updateServiceAccount(deps.database.db, serviceAccountID, c.req.valid("json"), who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );
}
