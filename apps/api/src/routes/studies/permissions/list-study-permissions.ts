import { z } from "@hono/zod-openapi";
import { assertStudyPermission, hasPermission, studyResource } from "@studyflow/domain/access";
import { listStudyPermissions } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

const holderSchema = z.object({
  user: z.object({ id: z.string(), username: z.string(), email: z.string(), imageUrl: z.string() }),
  permissions: z.array(casePermissionSchema),
});

/** case-backend's study permissions, read: which management users hold which rights for a study. */
export function registerListStudyPermissions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/permissions",
      bothSlashes: true,
      tags: ["studies"],
      summary: "The management users holding permissions for a study (CASE)",
      description:
        "By management user id: the user and their permissions for exactly this study (grants for study `*` and " +
        "token subjects that are no management user are not listed). The permission lists are empty unless the " +
        "caller is an admin or holds `manage-study-permissions` for the study, as in case-backend. Requires " +
        "`read-study-config`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ permissions: z.record(z.string(), holderSchema) }), "by user id"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "read-study-config");
      const showRights = await hasPermission(db, who, {
        ...studyResource(studyKey),
        action: "manage-study-permissions",
      });
      const holders = await listStudyPermissions(db, studyKey);
      const permissions = Object.fromEntries(
        Object.entries(holders).map(([id, holder]) => [
          id,
          { user: holder.user, permissions: showRights ? holder.permissions.map(presentCasePermission) : [] },
        ]),
      );
      return c.json({ permissions }, 200);
    },
  );
}
