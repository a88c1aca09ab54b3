import { z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  addStudyPermission,
  assertStudyPermission,
  hasPermission,
  listStudyPermissions,
  removeStudyPermission,
  studyResource,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import { caseRoute } from "../../../case-compat/case-route";
import type { AppDeps } from "../../../deps";
import { caseLimiterSchema, casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../../schemas";

const holderSchema = z.object({
  user: z.object({ id: z.string(), username: z.string(), email: z.string(), imageUrl: z.string() }),
  permissions: z.array(casePermissionSchema),
});

/** case-backend's study permission routes: which management users hold which rights for a study. */
export function registerStudyPermissions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  caseRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/permissions",
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
  caseRoute(
    router,
    {
      method: "post",
      path: "/{studyKey}/permissions",
      tags: ["studies"],
      summary: "Grant a management user a permission for a study (CASE)",
      description:
        "The permission is for this study whatever `resourceType`/`resourceKey` say (as in case-backend). 400 when " +
        "`subjectId` names no management user or `action` is no study action; the same grant again is no error. " +
        "Audited (`study.permission.add`). Requires `manage-study-permissions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      body: z.object({
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
  caseRoute(
    router,
    {
      method: "delete",
      path: "/{studyKey}/permissions/{permissionID}",
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
