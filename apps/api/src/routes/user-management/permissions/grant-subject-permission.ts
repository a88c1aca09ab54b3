import { z } from "@hono/zod-openapi";
import type { SubjectType } from "@studyflow/db";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, newPermissionBody, now } from "../user-management-contract";
import { SUBJECT_KINDS, subjectIdOf, subjectParams } from "./subject-kinds";

export function registerGrantSubjectPermission(router: ApiRouter, deps: AppDeps, subjectType: SubjectType) {
  const kind = SUBJECT_KINDS[subjectType];
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: TAGS,
      summary: `Grant a ${kind.noun} a permission (CASE, admin)`,
      description:
        "Study actions (CASE's and studyflow's names, or `*`) on a study key or `*`; messaging keys with action `*`; " +
        `users \`*\` with \`delete-users\`. An unknown ${kind.noun} is 400 \`${kind.unknownOnGrant}\` (as case-backend); ` +
        "an equal grant 409.",
      security: MANAGEMENT_SECURITY,
      request: { params: subjectParams(kind) },
      caseBody: newPermissionBody,
      responses: {
        200: jsonContent(z.object({ permission: casePermissionSchema }), "the new permission"),
        ...errorResponses([400, 401, 403, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const body = c.req.valid("json");
      const row = await kind.grant(
        deps.database.db,
        subjectIdOf(kind, c.req.valid("param")),
        { ...body, limiter: body.limiter ?? null },
        who.subject,
        now(deps),
      );
      return c.json({ permission: presentCasePermission(row) }, 200);
    },
  );
}
