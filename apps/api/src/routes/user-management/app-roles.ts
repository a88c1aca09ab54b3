import { z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  addManagementUserAppRole,
  createAppRoleTemplate,
  deleteAppRoleTemplate,
  deleteAppRoleTemplatesForApp,
  deleteAppRolesForApp,
  listAppRoles,
  listAppRoleTemplates,
  listManagementUserAppRoles,
  readAppRoleTemplate,
  removeManagementUserAppRole,
  updateAppRoleTemplate,
  type AppRoleRow,
  type AppRoleTemplateRow,
} from "@studyflow/domain";
import { RESOURCE_TYPES } from "@studyflow/db";
import type { AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { caseLimiterSchema } from "@studyflow/presenters/case-permission";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../schemas";
import { ADMIN_ONLY, TAGS, adminOf, idParam, newPermissionBody, now, userIdParam } from "./shared";

const caseAppRoleSchema = z
  .object({
    id: z.string(),
    subjectId: z.string(),
    subjectType: z.string(),
    appName: z.string(),
    role: z.string(),
    createdAt: z.string(),
  })
  .openapi("CaseAppRole");

const requiredPermissionSchema = z.object({
  resourceType: z.enum(RESOURCE_TYPES),
  resourceKey: z.string(),
  action: z.string(),
  limiter: z.array(z.record(z.string(), z.string())).optional(),
});

const caseAppRoleTemplateSchema = z
  .object({
    id: z.string(),
    appName: z.string(),
    role: z.string(),
    requiredPermissions: z.array(requiredPermissionSchema),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("CaseAppRoleTemplate");

const templateBody = z.object({
  appName: z.string().max(200),
  role: z.string().max(200),
  requiredPermissions: z
    .array(newPermissionBody.extend({ limiter: caseLimiterSchema.optional() }))
    .max(200)
    .nullable()
    .optional(),
});

const presentAppRole = (row: AppRoleRow): z.infer<typeof caseAppRoleSchema> => ({
  id: row.id,
  subjectId: row.subjectId,
  subjectType: row.subjectType,
  appName: row.appName,
  role: row.role,
  createdAt: row.createdAt.toISOString(),
});

const presentTemplate = (row: AppRoleTemplateRow): z.infer<typeof caseAppRoleTemplateSchema> => ({
  id: row.id,
  appName: row.appName,
  role: row.role,
  requiredPermissions: row.requiredPermissions.map((permission) => ({
    resourceType: permission.resourceType,
    resourceKey: permission.resourceKey,
    action: permission.action,
    ...(permission.limiter && permission.limiter.length > 0 ? { limiter: permission.limiter } : {}),
  })),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/** The templates' routes (fixed paths: registered before any parameter path of the router). */
export function registerAppRoleTemplateRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const templateIdParam = z.object({
    appRoleTemplateID: idParam("appRoleTemplateID", "the app role template's id"),
  });

  caseRoute(
    router,
    {
      method: "get",
      path: "/app-roles/templates",
      tags: TAGS,
      summary: "List app role templates (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(z.object({ appRoleTemplates: z.array(caseAppRoleTemplateSchema) }), "the templates"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ appRoleTemplates: (await listAppRoleTemplates(db)).map(presentTemplate) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/app-roles/templates",
      tags: TAGS,
      summary: "Create an app role template (CASE, admin)",
      description: "One template per app and role (409 for a second).",
      security: MANAGEMENT_SECURITY,
      body: templateBody,
      responses: {
        200: jsonContent(messageSchema.extend({ appRoleTemplate: caseAppRoleTemplateSchema }), "created"),
        ...errorResponses([400, 401, 403, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const row = await createAppRoleTemplate(db, c.req.valid("json"), who.subject, now(deps));
      return c.json({ message: "app role template created", appRoleTemplate: presentTemplate(row) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/app-roles/templates/delete/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Delete an app role template and the roles made from it (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "deleted: `app role template deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      await deleteAppRoleTemplate(db, appRoleTemplateID, who.subject, now(deps));
      return c.json({ message: "app role template deleted" }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/app-roles/templates/delete-for-app/{appName}",
      tags: TAGS,
      summary: "Delete every template and app role of an app (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ appName: idParam("appName", "the app's name") }) },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "deleted: `app role template deleted`"),
        ...errorResponses([400, 401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appName } = c.req.valid("param");
      await deleteAppRoleTemplatesForApp(db, appName, who.subject, now(deps));
      return c.json({ message: "app role template deleted" }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/app-roles/templates/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Get an app role template (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ appRoleTemplate: caseAppRoleTemplateSchema }), "the template"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      return c.json({ appRoleTemplate: presentTemplate(await readAppRoleTemplate(db, appRoleTemplateID)) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "put",
      path: "/app-roles/templates/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Update an app role template (CASE, admin)",
      description: "Roles given from it earlier, and the permissions they granted, stay as they are.",
      security: MANAGEMENT_SECURITY,
      request: { params: templateIdParam },
      body: templateBody,
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema.extend({ appRoleTemplate: caseAppRoleTemplateSchema }), "updated"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { appRoleTemplateID } = c.req.valid("param");
      const row = await updateAppRoleTemplate(db, appRoleTemplateID, c.req.valid("json"), who.subject, now(deps));
      return c.json({ message: "app role template updated", appRoleTemplate: presentTemplate(row) }, 200);
    },
  );
}

/** Every subject's app roles (case-backend's `/app-roles/` group besides the templates). */
export function registerAppRoleRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  caseRoute(
    router,
    {
      method: "get",
      path: "/app-roles",
      tags: TAGS,
      summary: "List every app role (CASE, admin)",
      description: "The app roles of every management user and service account, by app, role and age.",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(z.object({ appRoles: z.array(caseAppRoleSchema) }), "the roles"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ appRoles: (await listAppRoles(db)).map(presentAppRole) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/app-roles/delete/{appName}",
      tags: TAGS,
      summary: "Remove every app role of an app (CASE, admin)",
      description:
        "Removes the app's roles from every subject in one transaction; the app's templates and the permissions " +
        "the roles granted stay (as case-backend). An app without roles answers the same. Audited " +
        "`app-role.delete-for-app`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ appName: idParam("appName", "the app's name") }) },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "removed: `app roles deleted`"),
        ...errorResponses([400, 401, 403], { 400: "blank app name", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      await deleteAppRolesForApp(db, c.req.valid("param").appName, who.subject, now(deps));
      return c.json({ message: "app roles deleted" }, 200);
    },
  );
}

/** A management user's app roles. */
export function registerManagementUserAppRoleRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  caseRoute(
    router,
    {
      method: "get",
      path: "/management-users/{userID}/app-roles",
      tags: TAGS,
      summary: "List a management user's app roles (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ appRoles: z.array(caseAppRoleSchema) }), "the roles"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { userID } = c.req.valid("param");
      return c.json({ appRoles: (await listManagementUserAppRoles(db, userID)).map(presentAppRole) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/management-users/{userID}/app-roles/{appRoleTemplateID}",
      tags: TAGS,
      summary: "Give a management user the role of a template (CASE, admin)",
      description:
        "Adds the role and grants each of the template's permissions the user lacks, in one transaction. Unknown " +
        "user: 400 `user not found` (as case-backend); unknown template: 404; a role the user has: 409.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({
          userID: idParam("userID", "the management user's id"),
          appRoleTemplateID: idParam("appRoleTemplateID", "the app role template's id"),
        }),
      },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema.extend({ appRole: caseAppRoleSchema }), "added: `user app role added`"),
        ...errorResponses([400, 401, 403, 404, 409], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, appRoleTemplateID } = c.req.valid("param");
      const { appRole } = await addManagementUserAppRole(db, userID, appRoleTemplateID, who.subject, now(deps));
      return c.json({ message: "user app role added", appRole: presentAppRole(appRole) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/management-users/{userID}/app-roles/{appRoleID}",
      tags: TAGS,
      summary: "Remove a management user's app role (CASE, admin)",
      description: "The permissions the role granted stay (as case-backend).",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({
          userID: idParam("userID", "the management user's id"),
          appRoleID: idParam("appRoleID", "the app role's id"),
        }),
      },
      bothSlashes: false,
      responses: {
        200: jsonContent(messageSchema, "removed: `user app role deleted`"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { userID, appRoleID } = c.req.valid("param");
      await removeManagementUserAppRole(db, userID, appRoleID, who.subject, now(deps));
      return c.json({ message: "user app role deleted" }, 200);
    },
  );
}
