import { z } from "@hono/zod-openapi";
import { createServiceAccount } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../user-management-contract";
import { accountProps, caseServiceAccountSchema, presentServiceAccount } from "./service-account-schemas";

export function registerCreateServiceAccount(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: TAGS,
      summary: "Create a service account (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      caseBody: accountProps,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ serviceAccount: caseServiceAccountSchema }), "the new account"),
        ...errorResponses([400, 401, 403], { 400: "blank or overlong label", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const row = await createServiceAccount(deps.database.db, c.req.valid("json"), who.subject, now(deps));
      return c.json({ serviceAccount: presentServiceAccount(row) }, 200);
    },
  );
}
