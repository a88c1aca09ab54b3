import { z } from "@hono/zod-openapi";
import { readServiceAccount } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../user-management-contract";
import { accountIdParam, caseServiceAccountSchema, presentServiceAccount } from "./service-account-schemas";

export function registerGetServiceAccount(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/{serviceAccountID}",
      tags: TAGS,
      summary: "Get a service account (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      responses: {
        200: jsonContent(z.object({ serviceAccount: caseServiceAccountSchema }), "the account"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      const account = await readServiceAccount(deps.database.db, serviceAccountID);
      return c.json({ serviceAccount: presentServiceAccount(account) }, 200);
    },
  );
}
