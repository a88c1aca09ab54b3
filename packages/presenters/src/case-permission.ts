import { z } from "@hono/zod-openapi";
import { RESOURCE_TYPES, SUBJECT_TYPES, type permissions } from "@studyflow/db";

/** Longest limiter accepted in a request: a few maps of a few keys serve every case-admin page. */
const MAX_LIMITER_MAPS = 100;
const MAX_LIMITER_KEYS = 20;

/**
 * CASE's limiter as requests carry it (`[{"surveyKey": "intake"}, …]`): string maps, at least one
 * key each; `null` or absent means unlimited. For the request bodies of permission routes.
 */
export const caseLimiterSchema = z
  .array(
    z
      .record(z.string().min(1).max(200), z.string().max(500))
      .refine((map) => Object.keys(map).length > 0, "a limiter map needs at least one key")
      .refine((map) => Object.keys(map).length <= MAX_LIMITER_KEYS, `at most ${MAX_LIMITER_KEYS} keys per map`),
  )
  .max(MAX_LIMITER_MAPS)
  .nullable()
  .openapi({
    description: 'maps a request must match on every key it names (e.g. `[{"surveyKey":"intake"}]`); null: unlimited',
    example: [{ surveyKey: "intake" }],
  });

/**
 * A permission as case-backend's management API shows it (`GET /v1/auth/permissions`, the
 * user-management and study-permission routes). `limiter` is left out when there is none, as Go's
 * omitempty leaves it out.
 */
export const casePermissionSchema = z
  .object({
    id: z.string().openapi({ description: "the permission's id (a number, as a string)" }),
    subjectId: z.string(),
    subjectType: z.enum(SUBJECT_TYPES),
    resourceType: z.enum(RESOURCE_TYPES),
    resourceKey: z.string().openapi({ description: 'a study key, a messaging key, or "*" for every resource' }),
    action: z.string().openapi({ description: 'the action, or "*" for every action of the resource type' }),
    limiter: z.array(z.record(z.string(), z.string())).optional(),
  })
  .openapi("CasePermission");

export type CasePermission = z.infer<typeof casePermissionSchema>;

type PermissionRow = Pick<
  typeof permissions.$inferSelect,
  "id" | "subjectId" | "subjectType" | "resourceType" | "studyKey" | "action" | "limiter"
>;

export function presentCasePermission(row: PermissionRow): CasePermission {
  return {
    id: String(row.id),
    subjectId: row.subjectId,
    subjectType: row.subjectType,
    resourceType: row.resourceType,
    resourceKey: row.studyKey,
    action: row.action,
    ...(row.limiter && row.limiter.length > 0 ? { limiter: row.limiter } : {}),
  };
}
