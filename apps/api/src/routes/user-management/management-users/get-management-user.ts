import { z } from "@hono/zod-openapi";
import { readManagementUser } from "@studyflow/domain/management-users";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, userIdParam } from "../user-management-contract";
import { caseManagementUserSchema, presentManagementUser } from "./management-user-schema";

export function registerGetManagementUser(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/{userID}",
      tags: TAGS,
      summary: "Get a management user (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: jsonContent(z.object({ user: caseManagementUserSchema }), "the user"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { userID } = c.req.valid("param");
      return c.json({ user: presentManagementUser(await readManagementUser(deps.database.db, userID)) }, 200);
    },
  );
}
