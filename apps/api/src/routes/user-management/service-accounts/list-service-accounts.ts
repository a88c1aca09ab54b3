import { z } from "@hono/zod-openapi";
import { listServiceAccounts } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../user-management-contract";
import { caseServiceAccountSchema, presentServiceAccount } from "./service-account-schemas";

export function registerListServiceAccounts(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List service accounts (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ serviceAccounts: z.array(caseServiceAccountSchema) }), "the accounts"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ serviceAccounts: (await listServiceAccounts(deps.database.db)).map(presentServiceAccount) }, 200);
    },
  );
}
