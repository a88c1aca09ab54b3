import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { removeStudyPermission } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../../schemas";

/** case-backend's study permissions: a right taken back. */
export function registerRemoveStudyPermission(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{studyKey}/permissions/{permissionID}",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Remove a permission from a study (CASE)",
      description:
        "404 for an unknown id, 400 for a permission that is not one of this study. Audited " +
        "(`study.permission.remove`). Requires `manage-study-permissions`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam.extend({
          permissionID: z
            .string()
            .min(1)
            .max(40)
            .openapi({ param: { name: "permissionID", in: "path" } }),
        }),
      },
      responses: {
        200: jsonContent(messageSchema, "removed"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or permission not found" }),
      },
    },
    async (c) => {
      const { studyKey, permissionID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-permissions");
      await removeStudyPermission(db, studyKey, permissionID, who.subject);
      return c.json({ message: "study permission removed" }, 200);
    },
  );
}
