import { z } from "@hono/zod-openapi";
import type { AppRoleRow } from "@studyflow/domain/management-users";

/** An app role of a subject, as case-backend shows it (in the list of every role and in a user's). */
export const caseAppRoleSchema = z
  .object({
    id: z.string(),
    subjectId: z.string(),
    subjectType: z.string(),
    appName: z.string(),
    role: z.string(),
    createdAt: z.string(),
  })
  .openapi("CaseAppRole");

export const presentAppRole = (row: AppRoleRow): z.infer<typeof caseAppRoleSchema> => ({
  id: row.id,
  subjectId: row.subjectId,
  subjectType: row.subjectType,
  appName: row.appName,
  role: row.role,
  createdAt: row.createdAt.toISOString(),
});
