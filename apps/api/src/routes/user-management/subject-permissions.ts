import { z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  grantManagementUserPermission,
  grantServiceAccountPermission,
  listManagementUserPermissions,
  listServiceAccountPermissions,
  revokeManagementUserPermission,
  revokeServiceAccountPermission,
  setManagementUserPermissionLimiter,
  setServiceAccountPermissionLimiter,
  type NewPermission,
  type PermissionRow,
} from "@studyflow/domain";
import type { Database, PermissionLimiter, SubjectType } from "@studyflow/db";
import type { AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, limiterBody, newPermissionBody, now } from "./shared";

/** What differs between the subjects whose permissions case-admin manages: their path and their domain functions. */
interface SubjectKind {
  /** The subject's collection below /v1/user-management. */
  collection: string;
  /** The path parameter naming the subject (case-backend's name). */
  idName: string;
  noun: string;
  /** The 400 message for a grant to an unknown subject, as case-backend answers it. */
  unknownOnGrant: string;
  list(db: Database, subjectId: string): Promise<PermissionRow[]>;
  grant(db: Database, subjectId: string, input: NewPermission, by: string, at: Date): Promise<PermissionRow>;
  revoke(db: Database, subjectId: string, permissionId: string, by: string, at: Date): Promise<void>;
  setLimiter(
    db: Database,
    subjectId: string,
    permissionId: string,
    limiter: PermissionLimiter | null,
    by: string,
    at: Date,
  ): Promise<PermissionRow>;
}

const SUBJECT_KINDS: Record<SubjectType, SubjectKind> = {
  "management-user": {
    collection: "/management-users",
    idName: "userID",
    noun: "management user",
    unknownOnGrant: "user not found",
    list: listManagementUserPermissions,
    grant: grantManagementUserPermission,
    revoke: revokeManagementUserPermission,
    setLimiter: setManagementUserPermissionLimiter,
  },
  "service-account": {
    collection: "/service-accounts",
    idName: "serviceAccountID",
    noun: "service account",
    unknownOnGrant: "service account not found",
    list: listServiceAccountPermissions,
    grant: grantServiceAccountPermission,
    revoke: revokeServiceAccountPermission,
    setLimiter: setServiceAccountPermissionLimiter,
  },
};

/**
 * A subject's permissions as case-backend serves them for management users and service accounts
 * alike (admin-only, audited): list, grant, remove, set the limiter, at
 * `{collection}/{id}/permissions[/{permissionID}[/limiter]]`.
 */
export function registerSubjectPermissionRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps, subjectType: SubjectType) {
  const db = deps.database.db;
  const kind = SUBJECT_KINDS[subjectType];
  const { idName, noun } = kind;
  const path = `${kind.collection}/{${idName}}/permissions`;
  const subjectParams = z.object({ [idName]: idParam(idName, `the ${noun}'s id`) });
  const permissionParams = z.object({
    [idName]: idParam(idName, `the ${noun}'s id`),
    permissionID: idParam("permissionID", "the permission's id"),
  });
  // The params schema has checked both ids before a handler runs; "" (no id) only satisfies the types.
  const subjectIdOf = (params: Record<string, string | undefined>) => params[idName] ?? "";
  const permissionIdOf = (params: Record<string, string | undefined>) => params.permissionID ?? "";

  caseRoute(
    router,
    {
      method: "get",
      path,
      tags: TAGS,
      summary: `List a ${noun}'s permissions (CASE, admin)`,
      security: MANAGEMENT_SECURITY,
      request: { params: subjectParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ permissions: z.array(casePermissionSchema) }), "the permissions"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const rows = await kind.list(db, subjectIdOf(c.req.valid("param")));
      return c.json({ permissions: rows.map(presentCasePermission) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path,
      tags: TAGS,
      summary: `Grant a ${noun} a permission (CASE, admin)`,
      description:
        "Study actions (CASE's and studyflow's names, or `*`) on a study key or `*`; messaging keys with action `*`; " +
        `users \`*\` with \`delete-users\`. An unknown ${noun} is 400 \`${kind.unknownOnGrant}\` (as case-backend); ` +
        "an equal grant 409.",
      security: MANAGEMENT_SECURITY,
      request: { params: subjectParams },
      body: newPermissionBody,
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ permission: casePermissionSchema }), "the new permission"),
        ...errorResponses([400, 401, 403, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const body = c.req.valid("json");
      const row = await kind.grant(
        db,
        subjectIdOf(c.req.valid("param")),
        { ...body, limiter: body.limiter ?? null },
        who.subject,
        now(deps),
      );
      return c.json({ permission: presentCasePermission(row) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: `${path}/{permissionID}`,
      tags: TAGS,
      summary: `Remove a ${noun}'s permission (CASE, admin)`,
      description: `404 when the permission is not this ${noun}'s (case-backend does not check).`,
      security: MANAGEMENT_SECURITY,
      request: { params: permissionParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "removed: `permission deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const params = c.req.valid("param");
      await kind.revoke(db, subjectIdOf(params), permissionIdOf(params), who.subject, now(deps));
      return c.json({ message: "permission deleted" }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "put",
      path: `${path}/{permissionID}/limiter`,
      tags: TAGS,
      summary: `Set the limiter of a ${noun}'s permission (CASE, admin)`,
      description:
        "`limiter` null, absent or `[]`: unlimited. 404 when the permission is not this " +
        `${noun}'s (case-backend does not check); 409 when the ${noun} has the same grant with this limiter.`,
      security: MANAGEMENT_SECURITY,
      request: { params: permissionParams },
      body: limiterBody,
      bothSlashes: false,
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
      await kind.setLimiter(db, subjectIdOf(params), permissionIdOf(params), limit, who.subject, now(deps));
      return c.json({ message: "permission limiter updated" }, 200);
    },
  );
}
