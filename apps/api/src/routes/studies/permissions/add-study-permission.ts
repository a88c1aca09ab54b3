import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { addStudyPermission } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { caseLimiterSchema, casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../../schemas";

/** case-backend's study permissions: a right granted to a management user for a study. */
export function registerAddStudyPermission(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{studyKey}/permissions",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Grant a management user a permission for a study (CASE)",
      description:
        "The permission is for this study whatever `resourceType`/`resourceKey` say (as in case-backend). 400 when " +
        "`subjectId` names no management user or `action` is no study action; the same grant again is no error. " +
        "Audited (`study.permission.add`). Requires `manage-study-permissions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({
        resourceType: z.string().optional(),
        resourceKey: z.string().optional(),
        subjectId: z.string({ error: "subjectId: required" }).min(1, "subjectId: required").max(200),
        action: z.string({ error: "action: required" }).min(1, "action: required").max(100),
        limiter: caseLimiterSchema.optional(),
      }),
      responses: {
        200: jsonContent(messageSchema.extend({ permission: casePermissionSchema }), "granted (or held already)"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-permissions");
      const { subjectId, action, limiter } = c.req.valid("json");
      const { permission } = await addStudyPermission(
        db,
        studyKey,
        { subjectId, action, limiter: limiter ?? null },
        who.subject,
      );
      return c.json({ message: "study permission added", permission: presentCasePermission(permission) }, 200);
    },
  );
}
