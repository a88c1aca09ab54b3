import { z } from "@hono/zod-openapi";
import type { ManagementUserRow } from "@studyflow/domain/management-users";
import { caseTimeOf } from "../user-management-contract";

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
    lastLoginAt: caseTimeOf(row.lastLoginAt),
    createdAt: caseTimeOf(row.createdAt),
  };
}
