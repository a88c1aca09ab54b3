import { z } from "@hono/zod-openapi";
import type { ServiceAccountApiKey } from "@studyflow/domain/access";
import type { ServiceAccountRow } from "@studyflow/domain/management-users";
import { caseTimeOf, idParam } from "../user-management-contract";

export const accountIdParam = z.object({ serviceAccountID: idParam("serviceAccountID", "the service account's id") });
export const accountKeyParams = z.object({
  serviceAccountID: idParam("serviceAccountID", "the service account's id"),
  apiKeyID: idParam("apiKeyID", "the API key's id"),
});

/** A service account's label and description, as case-admin sends them to create and to update one. */
export const accountProps = z.object({
  label: z.string().max(200),
  description: z.string().max(2000).optional(),
});

export const caseServiceAccountSchema = z
  .object({ id: z.string(), label: z.string(), description: z.string(), createdAt: z.string() })
  .openapi("CaseServiceAccount");

export function presentServiceAccount(row: ServiceAccountRow): z.infer<typeof caseServiceAccountSchema> {
  return { id: row.id, label: row.label, description: row.description, createdAt: caseTimeOf(row.createdAt) };
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
    createdAt: caseTimeOf(key.createdAt),
    lastUsedAt: caseTimeOf(key.lastUsedAt),
    ...(key.revokedAt ? { revokedAt: key.revokedAt.toISOString() } : {}),
  };
}

export const successSchema = z.object({ success: z.literal(true) }).openapi("CaseSuccess");
