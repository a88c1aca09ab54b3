import { z } from "@hono/zod-openapi";
import type { SubjectType } from "@studyflow/db";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf } from "../user-management-contract";
import { SUBJECT_KINDS, subjectIdOf, subjectParams } from "./subject-kinds";

export function registerListSubjectPermissions(router: ApiRouter, deps: AppDeps, subjectType: SubjectType) {
  const kind = SUBJECT_KINDS[subjectType];
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: `List a ${kind.noun}'s permissions (CASE, admin)`,
      security: MANAGEMENT_SECURITY,
      request: { params: subjectParams(kind) },
      responses: {
        200: jsonContent(z.object({ permissions: z.array(casePermissionSchema) }), "the permissions"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const rows = await kind.list(deps.database.db, subjectIdOf(kind, c.req.valid("param")));
      return c.json({ permissions: rows.map(presentCasePermission) }, 200);
    },
  );
}
