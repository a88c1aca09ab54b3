import { z } from "@hono/zod-openapi";
import type { AppRoleTemplateRow } from "@studyflow/domain/management-users";
import { RESOURCE_TYPES } from "@studyflow/db";
import { caseLimiterSchema } from "@studyflow/presenters/case-permission";
import { idParam, newPermissionBody } from "../../user-management-contract";

export const templateIdParam = z.object({
  appRoleTemplateID: idParam("appRoleTemplateID", "the app role template's id"),
});

const requiredPermissionSchema = z.object({
  resourceType: z.enum(RESOURCE_TYPES),
  resourceKey: z.string(),
  action: z.string(),
  limiter: z.array(z.record(z.string(), z.string())).optional(),
});

export const caseAppRoleTemplateSchema = z
  .object({
    id: z.string(),
    appName: z.string(),
    role: z.string(),
    requiredPermissions: z.array(requiredPermissionSchema),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("CaseAppRoleTemplate");

/** A template as case-admin sends it to create or update one. */
export const templateBody = z.object({
  appName: z.string().max(200),
  role: z.string().max(200),
  requiredPermissions: z
    .array(newPermissionBody.extend({ limiter: caseLimiterSchema.optional() }))
    .max(200)
    .nullable()
    .optional(),
});

export const presentTemplate = (row: AppRoleTemplateRow): z.infer<typeof caseAppRoleTemplateSchema> => ({
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
