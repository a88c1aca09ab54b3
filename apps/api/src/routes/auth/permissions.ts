import { z } from "@hono/zod-openapi";
import { SUBJECT_TYPES } from "@studyflow/db";
import { listSubjectAppRoles, listSubjectPermissions } from "@studyflow/domain/management-users";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { casePermissionSchema, presentCasePermission } from "@studyflow/presenters/case-permission";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";

/** case-backend's AppRole as GET /v1/auth/permissions lists it. */
const appRoleSchema = z
  .object({
    id: z.string(),
    subjectId: z.string(),
    subjectType: z.enum(SUBJECT_TYPES),
    appName: z.string(),
    role: z.string(),
    createdAt: z.string().openapi({ description: "RFC 3339" }),
  })
  .openapi("CaseAppRole");

const myPermissionsSchema = z
  .object({
    isAdmin: z.boolean(),
    permissions: z.array(casePermissionSchema),
    appRoles: z.array(appRoleSchema),
  })
  .openapi("CaseMyPermissions");

export function registerMyPermissions(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/permissions",
      tags: ["management sign-in"],
      summary: "The caller's admin flag, permissions and app roles (case-admin)",
      description:
        "case-admin filters its study list and gates its tools with it. Permissions are the caller's grants as CASE " +
        "Permissions (grants made before resource types existed are of resource type `study`, the study key as " +
        "`resourceKey`); a service account's API key shows its own grants (case-backend: none). Lists are [] rather " +
        "than null.",
      security: MANAGEMENT_SECURITY,
      middleware: [managementAuth(deps)],
      bothSlashes: true,
      responses: {
        200: jsonContent(myPermissionsSchema, "the caller's rights"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const subjectType = who.subjectType ?? "management-user";
      const { db } = deps.database;
      const subject = { subjectType, subjectId: who.subject };
      const [grants, roles] = await Promise.all([
        listSubjectPermissions(db, subject),
        listSubjectAppRoles(db, subject),
      ]);
      return c.json(
        {
          isAdmin: who.isAdmin,
          permissions: grants.map(presentCasePermission),
          appRoles: roles.map((role) => ({
            id: role.id,
            subjectId: role.subjectId,
            subjectType: role.subjectType,
            appName: role.appName,
            role: role.role,
            createdAt: role.createdAt.toISOString(),
          })),
        },
        200,
      );
    },
  );
}
