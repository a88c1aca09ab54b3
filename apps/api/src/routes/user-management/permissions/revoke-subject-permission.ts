import type { SubjectType } from "@studyflow/db";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../user-management-contract";
import { SUBJECT_KINDS, permissionIdOf, permissionParams, subjectIdOf } from "./subject-kinds";

export function registerRevokeSubjectPermission(router: ApiRouter, deps: AppDeps, subjectType: SubjectType) {
  const kind = SUBJECT_KINDS[subjectType];
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{permissionID}",
      tags: TAGS,
      summary: `Remove a ${kind.noun}'s permission (CASE, admin)`,
      description: `404 when the permission is not this ${kind.noun}'s (case-backend does not check).`,
      security: MANAGEMENT_SECURITY,
      request: { params: permissionParams(kind) },
      responses: {
        200: jsonContent(messageSchema, "removed: `permission deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const params = c.req.valid("param");
      await kind.revoke(deps.database.db, subjectIdOf(kind, params), permissionIdOf(params), who.subject, now(deps));
      return c.json({ message: "permission deleted" }, 200);
    },
  );
}
