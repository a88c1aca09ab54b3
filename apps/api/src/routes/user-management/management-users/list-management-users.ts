import { z } from "@hono/zod-openapi";
import { listManagementUsers } from "@studyflow/domain/management-users";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { TAGS } from "../user-management-contract";
import { caseManagementUserSchema, presentManagementUser } from "./management-user-schema";

/** GET /management-users: every management user; non-admins see only what the study permission picker shows. */
export function registerListManagementUsers(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List management users (CASE)",
      description:
        "Every management user. Admins get every field; anyone else (a non-admin, a service account's API key) only " +
        "id, username and imageUrl, what case-admin's user picker on a study's access control page reads " +
        "(case-backend adds email, provider and isAdmin).",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ users: z.array(caseManagementUserSchema) }), "the users"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const rows = await listManagementUsers(deps.database.db);
      return c.json({ users: rows.map((row) => presentManagementUser(row, !who.isAdmin)) }, 200);
    },
  );
}
