import type { SubjectType } from "@studyflow/db";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, limiterBody, now } from "../user-management-contract";
import { SUBJECT_KINDS, permissionIdOf, permissionParams, subjectIdOf } from "./subject-kinds";

export function registerSetSubjectPermissionLimiter(router: ApiRouter, deps: AppDeps, subjectType: SubjectType) {
  const kind = SUBJECT_KINDS[subjectType];
  defineRoute(
    router,
    {
      method: "put",
      path: "/{permissionID}/limiter",
      tags: TAGS,
      summary: `Set the limiter of a ${kind.noun}'s permission (CASE, admin)`,
      description:
        "`limiter` null, absent or `[]`: unlimited. 404 when the permission is not this " +
        `${kind.noun}'s (case-backend does not check); 409 when the ${kind.noun} has the same grant with this limiter.`,
      security: MANAGEMENT_SECURITY,
      request: { params: permissionParams(kind) },
      caseBody: limiterBody,
      responses: {
        200: jsonContent(messageSchema, "updated: `permission limiter updated`"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const params = c.req.valid("param");
      const { limiter } = c.req.valid("json");
      const limit = limiter ?? null;
      const subjectId = subjectIdOf(kind, params);
      await kind.setLimiter(deps.database.db, subjectId, permissionIdOf(params), limit, who.subject, now(deps));
      return c.json({ message: "permission limiter updated" }, 200);
    },
  );
}
