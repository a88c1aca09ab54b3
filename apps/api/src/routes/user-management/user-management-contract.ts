import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Forbidden } from "@studyflow/domain/errors";
import { RESOURCE_TYPES } from "@studyflow/db";
import { managementOf, type AppEnv } from "../../app-env";
import type { ManagementPrincipal } from "../../auth/principals";
import type { AppDeps } from "../../deps";
import { caseLimiterSchema } from "@studyflow/presenters/case-permission";

/**
 * What the user-management operations have in common: their tag, the admin-only rule and its 403,
 * the request's time, the id path parameters and permission bodies, and how case-backend shows a
 * time.
 */

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
export const now = (deps: AppDeps) => new Date(deps.clock());

/** A path parameter naming one row (ids are uuids or numbers; anything up to 200 characters is looked up, unknown 404). */
export const idParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name, in: "path" }, description });

export const userIdParam = z.object({ userID: idParam("userID", "the management user's id") });

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

/** A time as case-backend shows it: Go's zero time for one never set. */
export const caseTimeOf = (at: Date | null | undefined) => (at ? at.toISOString() : GO_ZERO_TIME);
