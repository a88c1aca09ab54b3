import { and, asc, eq } from "drizzle-orm";
import {
  appRoles,
  managementSessions,
  managementUsers,
  type Database,
  type Executor,
  type PermissionLimiter,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { revokeSubjectTokens } from "../access/token-revocations";
import { forgetCached } from "../cache/read-cache";
import { Invalid, NotFound } from "../errors";
import {
  deleteAllSubjectPermissions,
  deleteSubjectPermission,
  insertSubjectPermission,
  listSubjectPermissions,
  updateSubjectPermissionLimiter,
  type NewPermission,
  type PermissionRow,
} from "./permissions";

/**
 * The management users' directory as admins keep it (case-admin's user management): list, read,
 * delete, and the permissions of one user. Users are created by signing in.
 */

export type ManagementUserRow = typeof managementUsers.$inferSelect;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can name a management user (ids are uuids; anything else names none). */
const isUserId = (id: string) => UUID_PATTERN.test(id);

/** Every management user, oldest first. */
export async function listManagementUsers(db: Executor): Promise<ManagementUserRow[]> {
  return db.select().from(managementUsers).orderBy(asc(managementUsers.createdAt), asc(managementUsers.id));
}

/** One management user, or NotFound. */
export async function readManagementUser(db: Executor, id: string): Promise<ManagementUserRow> {
  if (!isUserId(id)) throw new NotFound(`no management user "${id}"`);
  const [row] = await db.select().from(managementUsers).where(eq(managementUsers.id, id)).limit(1);
  if (!row) throw new NotFound(`no management user "${id}"`);
  return row;
}

/**
 * Deletes a management user with everything that acts for them, in one transaction: sessions,
 * permissions, app roles, the user; and ends every token minted for them. Deleting oneself is
 * refused (case-backend's rule: an admin cannot lock themselves out by mistake).
 */
export async function removeManagementUser(
  db: Database,
  id: string,
  by: string,
  now: Date,
): Promise<{ sessions: number; permissions: number; appRoles: number }> {
  if (id === by) throw new Invalid("user cannot delete itself");
  if (!isUserId(id)) throw new NotFound(`no management user "${id}"`);
  const removed = await db.transaction(async (tx) => {
    const [user] = await tx.select().from(managementUsers).where(eq(managementUsers.id, id)).for("update").limit(1);
    if (!user) throw new NotFound(`no management user "${id}"`);
    const sessions = await tx
      .delete(managementSessions)
      .where(eq(managementSessions.userId, id))
      .returning({ id: managementSessions.id });
    const permissionCount = await deleteAllSubjectPermissions(tx, { subjectType: "management-user", subjectId: id });
    const roles = await tx
      .delete(appRoles)
      .where(and(eq(appRoles.subjectType, "management-user"), eq(appRoles.subjectId, id)))
      .returning({ id: appRoles.id });
    await tx.delete(managementUsers).where(eq(managementUsers.id, id));
    await revokeSubjectTokens(tx, id, now);
    const counts = { sessions: sessions.length, permissions: permissionCount, appRoles: roles.length };
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "management-user.delete",
        target: id,
        details: { email: user.email, provider: user.provider, sub: user.sub, ...counts },
      },
      now,
    );
    return counts;
  });
  forgetCached(db, "grants", id);
  return removed;
}

const userSubject = (id: string) => ({ subjectType: "management-user", subjectId: id }) as const;

/** A management user's permissions (NotFound for an unknown user). */
export async function listManagementUserPermissions(db: Executor, userId: string): Promise<PermissionRow[]> {
  await readManagementUser(db, userId);
  return listSubjectPermissions(db, userSubject(userId));
}

/** Grants a management user a permission; an unknown user is Invalid, as case-backend answers it (400). */
export async function grantManagementUserPermission(
  db: Database,
  userId: string,
  input: NewPermission,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  const row = await db.transaction(async (tx) => {
    const [user] = isUserId(userId)
      ? await tx
          .select({ id: managementUsers.id })
          .from(managementUsers)
          .where(eq(managementUsers.id, userId))
          .for("share")
          .limit(1)
      : [];
    if (!user) throw new Invalid("user not found");
    return insertSubjectPermission(tx, userSubject(userId), input, by, now);
  });
  forgetCached(db, "grants", userId);
  return row;
}

export async function revokeManagementUserPermission(
  db: Database,
  userId: string,
  permissionId: string,
  by: string,
  now: Date,
): Promise<void> {
  await deleteSubjectPermission(db, userSubject(userId), permissionId, by, now);
}

export async function setManagementUserPermissionLimiter(
  db: Database,
  userId: string,
  permissionId: string,
  limiter: PermissionLimiter | null,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  return updateSubjectPermissionLimiter(db, userSubject(userId), permissionId, limiter, by, now);
}
