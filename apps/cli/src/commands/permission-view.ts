import type { PermissionRow } from "@studyflow/domain/management-users";

/** A permission as the CLI prints it: the row's resource key under its own name. */
export const permissionView = (row: PermissionRow) => ({
  id: String(row.id),
  subjectType: row.subjectType,
  subjectId: row.subjectId,
  resourceType: row.resourceType,
  resourceKey: row.studyKey,
  action: row.action,
  limiter: row.limiter,
  createdAt: row.createdAt,
});
