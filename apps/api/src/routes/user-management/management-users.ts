import { z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  grantManagementUserPermission,
  listManagementUserPermissions,
  listManagementUsers,
  readManagementUser,
  removeManagementUser,
  revokeManagementUserPermission,
  setManagementUserPermissionLimiter,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { casePermissionSchema, presentCasePermission } from "../../presenters/case-permission";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../schemas";
import {
  TAGS,
  adminOf,
  caseManagementUserSchema,
  limiterBody,
  newPermissionBody,
  presentManagementUser,
  userIdParam,
  userPermissionParams,
} from "./shared";

const ADMIN_ONLY = "the caller is not an admin";

/** GET /management-users: every management user; non-admins see the short form. */
export function registerListManagementUsers(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "get",
      path: "/management-users",
      tags: TAGS,
      summary: "List management users (CASE)",
      description:
        "Every management user. Admins get every field; anyone else id, email, username, provider, imageUrl and isAdmin.",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(z.object({ users: z.array(caseManagementUserSchema) }), "the users"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const rows = await listManagementUsers(deps.database.db);
      return c.json({ users: rows.map((row) => presentManagementUser(row, !who.isAdmin)) }, 200);
    },
  );
}

export function registerGetManagementUser(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "get",
      path: "/management-users/{userID}",
      tags: TAGS,
      summary: "Get a management user (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      bothSlashes: false,
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

export function registerDeleteManagementUser(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "delete",
      path: "/management-users/{userID}",
      tags: TAGS,
      summary: "Delete a management user (CASE, admin)",
      description:
        "Deletes the user with their sessions, permissions and app roles in one transaction and ends every token " +
        "minted for them. An admin cannot delete themselves (400).",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "deleted: `user deleted`"),
        ...errorResponses([400, 401, 403, 404], { 400: "user cannot delete itself", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID } = c.req.valid("param");
      await removeManagementUser(deps.database.db, userID, who.subject, now(deps));
      return c.json({ message: "user deleted" }, 200);
    },
  );
}

export function registerListManagementUserPermissions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "get",
      path: "/management-users/{userID}/permissions",
      tags: TAGS,
      summary: "List a management user's permissions (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ permissions: z.array(casePermissionSchema) }), "the permissions"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { userID } = c.req.valid("param");
      const rows = await listManagementUserPermissions(deps.database.db, userID);
      return c.json({ permissions: rows.map(presentCasePermission) }, 200);
    },
  );
}

export function registerCreateManagementUserPermission(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "post",
      path: "/management-users/{userID}/permissions",
      tags: TAGS,
      summary: "Grant a management user a permission (CASE, admin)",
      description:
        "Study actions (CASE's and studyflow's names, or `*`) on a study key or `*`; messaging keys with action `*`; " +
        "users `*` with `delete-users`. An unknown user is 400 `user not found` (as case-backend); an equal grant 409.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      body: newPermissionBody,
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ permission: casePermissionSchema }), "the new permission"),
        ...errorResponses([400, 401, 403, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID } = c.req.valid("param");
      const body = c.req.valid("json");
      const row = await grantManagementUserPermission(
        deps.database.db,
        userID,
        { ...body, limiter: body.limiter ?? null },
        who.subject,
        now(deps),
      );
      return c.json({ permission: presentCasePermission(row) }, 200);
    },
  );
}

export function registerDeleteManagementUserPermission(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "delete",
      path: "/management-users/{userID}/permissions/{permissionID}",
      tags: TAGS,
      summary: "Remove a management user's permission (CASE, admin)",
      description: "404 when the permission is not this user's (case-backend does not check).",
      security: MANAGEMENT_SECURITY,
      request: { params: userPermissionParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "removed: `permission deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, permissionID } = c.req.valid("param");
      await revokeManagementUserPermission(deps.database.db, userID, permissionID, who.subject, now(deps));
      return c.json({ message: "permission deleted" }, 200);
    },
  );
}

export function registerUpdateManagementUserPermissionLimiter(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "put",
      path: "/management-users/{userID}/permissions/{permissionID}/limiter",
      tags: TAGS,
      summary: "Set the limiter of a management user's permission (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userPermissionParams },
      body: limiterBody,
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "updated: `permission limiter updated`"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, permissionID } = c.req.valid("param");
      const { limiter } = c.req.valid("json");
      await setManagementUserPermissionLimiter(
        deps.database.db,
        userID,
        permissionID,
        limiter ?? null,
        who.subject,
        now(deps),
      );
      return c.json({ message: "permission limiter updated" }, 200);
    },
  );
}

export const now = (deps: AppDeps) => new Date((deps.clock ?? Date.now)());
