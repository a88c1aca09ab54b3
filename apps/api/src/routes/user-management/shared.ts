import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  Forbidden,
  type ManagementUserRow,
  type ServiceAccountApiKey,
  type ServiceAccountRow,
} from "@studyflow/domain";
import { RESOURCE_TYPES } from "@studyflow/db";
import { managementOf, type AppEnv } from "../../app-env";
import type { ManagementPrincipal } from "../../auth/principals";
import type { AppDeps } from "../../deps";
import { caseLimiterSchema } from "@studyflow/presenters/case-permission";

export const TAGS = ["user-management"];

/** The 403 of an admin-only operation, as the OpenAPI document states it. */
export const ADMIN_ONLY = "the caller is not an admin";

/** The caller, who must be an admin (case-backend's IsAdminUser; studyflow answers 403, not 401). */
export function adminOf(c: Context<AppEnv>): ManagementPrincipal {
  const who = managementOf(c);
  if (!who.isAdmin) throw new Forbidden("only admins manage users and service accounts");
  return who;
}

/** The request's time (the app's clock in tests). */
export const now = (deps: AppDeps) => new Date((deps.clock ?? Date.now)());

/** A path parameter naming one row (ids are uuids or numbers; anything up to 200 characters is looked up, unknown 404). */
export const idParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name, in: "path" }, description });

export const userIdParam = z.object({ userID: idParam("userID", "the management user's id") });
export const accountIdParam = z.object({ serviceAccountID: idParam("serviceAccountID", "the service account's id") });
export const accountKeyParams = z.object({
  serviceAccountID: idParam("serviceAccountID", "the service account's id"),
  apiKeyID: idParam("apiKeyID", "the API key's id"),
});

/** A permission to grant, as case-admin's permission dialog sends it. */
export const newPermissionBody = z.object({
  resourceType: z.enum(RESOURCE_TYPES),
  resourceKey: z.string().min(1, "required").max(200),
  action: z.string().min(1, "required").max(100),
  limiter: caseLimiterSchema.optional(),
});

export const limiterBody = z.object({ limiter: caseLimiterSchema.optional() });

/** Go's zero time, which case-backend shows for a time never set. */
const GO_ZERO_TIME = "0001-01-01T00:00:00Z";
const timeOf = (at: Date | null | undefined) => (at ? at.toISOString() : GO_ZERO_TIME);

export const caseManagementUserSchema = z
  .object({
    id: z.string(),
    sub: z.string().optional(),
    email: z.string().optional().openapi({ description: "admins only" }),
    username: z.string(),
    provider: z.string().optional().openapi({ description: "admins only" }),
    imageUrl: z.string(),
    isAdmin: z.boolean().optional().openapi({ description: "admins only; present only when true (Go's omitempty)" }),
    lastLoginAt: z.string().optional(),
    createdAt: z.string().optional(),
  })
  .openapi("CaseManagementUser");

/**
 * A management user as case-backend shows it to admins. `brief` (the list for anyone else) keeps
 * only what case-admin's one non-admin screen reads, the user picker of a study's access control
 * (id, username to sort and show, image): case-backend's short form adds e-mail, provider and
 * admin flag, which would hand every credential of the management API the staff's addresses and
 * who the admins are.
 */
export function presentManagementUser(row: ManagementUserRow, brief = false): z.infer<typeof caseManagementUserSchema> {
  if (brief) return { id: row.id, username: row.username, imageUrl: row.imageUrl };
  return {
    id: row.id,
    email: row.email,
    username: row.username,
    provider: row.provider,
    imageUrl: row.imageUrl,
    ...(row.isAdmin ? { isAdmin: true } : {}),
    sub: row.sub,
    lastLoginAt: timeOf(row.lastLoginAt),
    createdAt: timeOf(row.createdAt),
  };
}

export const caseServiceAccountSchema = z
  .object({ id: z.string(), label: z.string(), description: z.string(), createdAt: z.string() })
  .openapi("CaseServiceAccount");

export function presentServiceAccount(row: ServiceAccountRow): z.infer<typeof caseServiceAccountSchema> {
  return { id: row.id, label: row.label, description: row.description, createdAt: timeOf(row.createdAt) };
}

export const caseApiKeySchema = z
  .object({
    id: z.string(),
    serviceUserId: z.string(),
    key: z.string().openapi({
      description:
        "the whole key in the answer that creates it and in its creator's first list within 10 minutes; " +
        'otherwise a hint, "sf_xxxxxxxx…"',
    }),
    expiresAt: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string(),
    revokedAt: z.string().optional(),
  })
  .openapi("CaseServiceAccountApiKey");

export function presentApiKey(key: ServiceAccountApiKey): z.infer<typeof caseApiKeySchema> {
  return {
    id: key.id,
    serviceUserId: key.serviceAccountId,
    key: key.key,
    expiresAt: key.expiresAt.toISOString(),
    createdAt: timeOf(key.createdAt),
    lastUsedAt: timeOf(key.lastUsedAt),
    ...(key.revokedAt ? { revokedAt: key.revokedAt.toISOString() } : {}),
  };
}

export const successSchema = z.object({ success: z.literal(true) }).openapi("CaseSuccess");
