import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { listManagementUsers, readManagementUser, removeManagementUser } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../schemas";
import { ADMIN_ONLY, TAGS, adminOf, caseManagementUserSchema, now, presentManagementUser, userIdParam } from "./shared";

/** GET /management-users: every management user; non-admins see only what the study permission picker shows. */
export function registerListManagementUsers(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "get",
      path: "/management-users",
      tags: TAGS,
      summary: "List management users (CASE)",
      description:
        "Every management user. Admins get every field; anyone else (a non-admin, a service account's API key) only " +
        "id, username and imageUrl, what case-admin's user picker on a study's access control page reads " +
        "(case-backend adds email, provider and isAdmin).",
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
