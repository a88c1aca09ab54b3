import { and, asc, eq } from "drizzle-orm";
import {
  isUniqueViolation,
  CASE_STUDY_ACTIONS,
  MESSAGING_RESOURCE_KEYS,
  STUDY_ACTIONS,
  USERS_ACTIONS,
  permissions,
  type Database,
  type Executor,
  type PermissionAction,
  type PermissionLimiter,
  type ResourceType,
  type SubjectType,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Conflict, Invalid, NotFound } from "../errors";

/**
 * Permissions of one subject (a management user or a service account), as case-admin's user
 * management reads and changes them. Every change is audited and ends the subject's kept grants.
 */

export type PermissionRow = typeof permissions.$inferSelect;

/** A permission to grant, as case-admin's permission dialog sends it. */
export interface NewPermission {
  resourceType: ResourceType;
  resourceKey: string;
  action: string;
  limiter?: PermissionLimiter | null;
}

export interface PermissionSubject {
  subjectType: SubjectType;
  subjectId: string;
}

const MAX_RESOURCE_KEY_LENGTH = 200;
const STUDY_GRANT_ACTIONS: ReadonlySet<string> = new Set<string>(["*", ...STUDY_ACTIONS, ...CASE_STUDY_ACTIONS]);
const USERS_GRANT_ACTIONS: ReadonlySet<string> = new Set<string>(["*", ...USERS_ACTIONS]);
const MESSAGING_KEYS: ReadonlySet<string> = new Set<string>(["*", ...MESSAGING_RESOURCE_KEYS]);

/**
 * Checks a permission against what each resource type knows (case-backend stores anything; a
 * grant nobody checks would only mislead): study actions (CASE's and studyflow's names) on a
 * study key or "*"; messaging's four keys with action "*"; users' "*" with `delete-users`.
 */
export function checkedPermission(input: NewPermission): NewPermission & { action: PermissionAction } {
  const resourceKey = input.resourceKey.trim();
  if (resourceKey === "") throw new Invalid("resourceKey: required");
  if (resourceKey.length > MAX_RESOURCE_KEY_LENGTH) {
    throw new Invalid(`resourceKey: longer than ${MAX_RESOURCE_KEY_LENGTH} characters`);
  }
  const { resourceType, action } = input;
  if (resourceType === "study") {
    if (!STUDY_GRANT_ACTIONS.has(action)) throw new Invalid(`action: "${action}" is not an action on studies`);
  } else if (resourceType === "messaging") {
    if (!MESSAGING_KEYS.has(resourceKey)) {
      throw new Invalid(`resourceKey: messaging keys are ${[...MESSAGING_KEYS].join(", ")}, not "${resourceKey}"`);
    }
    if (action !== "*") throw new Invalid(`action: messaging permissions take action "*", not "${action}"`);
  } else {
    if (resourceKey !== "*") throw new Invalid(`resourceKey: users permissions take resource key "*"`);
    if (!USERS_GRANT_ACTIONS.has(action)) throw new Invalid(`action: "${action}" is not an action on users`);
  }
  const limiter = input.limiter && input.limiter.length > 0 ? input.limiter : null;
  return { resourceType, resourceKey, action: action as PermissionAction, limiter };
}

/** A numeric permission id, or NotFound (an id that cannot be one is no permission). */
function permissionIdOf(id: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(id)) throw new NotFound(`no permission "${id}"`);
  return Number(id);
}

/** What the audit log keeps of a granted or revoked permission. */
const permissionAuditDetails = (who: PermissionSubject, row: PermissionRow) => ({
  subjectType: who.subjectType,
  subjectId: who.subjectId,
  resourceType: row.resourceType,
  resourceKey: row.studyKey,
  permission: row.action,
  limiter: row.limiter,
});

/** The subject's permissions, oldest first. */
export async function listSubjectPermissions(db: Executor, who: PermissionSubject): Promise<PermissionRow[]> {
  return db
    .select()
    .from(permissions)
    .where(and(eq(permissions.subjectType, who.subjectType), eq(permissions.subjectId, who.subjectId)))
    .orderBy(asc(permissions.id));
}

/**
 * Grants one permission inside `tx` (the caller checked the subject exists in the same
 * transaction). An equal grant (same resource, action and limiter) is a Conflict.
 */
export async function insertSubjectPermission(
  tx: Executor,
  who: PermissionSubject,
  input: NewPermission,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  const permission = checkedPermission(input);
  const rows = await tx
    .insert(permissions)
    .values({
      subjectType: who.subjectType,
      subjectId: who.subjectId,
      resourceType: permission.resourceType,
      studyKey: permission.resourceKey,
      action: permission.action,
      limiter: permission.limiter ?? null,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning();
  const row = rows[0];
  if (!row) {
    throw new Conflict(
      `the ${who.subjectType} already has ${permission.action} on ${permission.resourceType} "${permission.resourceKey}"` +
        (permission.limiter ? " with this limiter" : ""),
    );
  }
  await recordAudit(
    tx,
    {
      studyKey: null,
      actor: by,
      action: "permission.grant",
      target: String(row.id),
      details: permissionAuditDetails(who, row),
    },
    now,
  );
  return row;
}

/** One of the subject's permissions, or NotFound (also when it is another subject's). */
async function ownPermission(tx: Executor, who: PermissionSubject, permissionId: string): Promise<PermissionRow> {
  const [row] = await tx
    .select()
    .from(permissions)
    .where(
      and(
        eq(permissions.id, permissionIdOf(permissionId)),
        eq(permissions.subjectType, who.subjectType),
        eq(permissions.subjectId, who.subjectId),
      ),
    )
    .for("update")
    .limit(1);
  if (!row) throw new NotFound(`the ${who.subjectType} has no permission "${permissionId}"`);
  return row;
}

/** Removes one of the subject's permissions. */
export async function deleteSubjectPermission(
  db: Database,
  who: PermissionSubject,
  permissionId: string,
  by: string,
  now: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await ownPermission(tx, who, permissionId);
    await tx.delete(permissions).where(eq(permissions.id, row.id));
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "permission.revoke",
        target: String(row.id),
        details: permissionAuditDetails(who, row),
      },
      now,
    );
  });
  forgetCached(db, "grants", who.subjectId);
}

/** Replaces the limiter of one of the subject's permissions (null or [] = unlimited). */
export async function updateSubjectPermissionLimiter(
  db: Database,
  who: PermissionSubject,
  permissionId: string,
  limiter: PermissionLimiter | null,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  const next = limiter && limiter.length > 0 ? limiter : null;
  let updated: PermissionRow;
  try {
    updated = await db.transaction(async (tx) => {
      const row = await ownPermission(tx, who, permissionId);
      const [changed] = await tx
        .update(permissions)
        .set({ limiter: next })
        .where(eq(permissions.id, row.id))
        .returning();
      if (!changed) throw new NotFound(`the ${who.subjectType} has no permission "${permissionId}"`);
      await recordAudit(
        tx,
        {
          studyKey: null,
          actor: by,
          action: "permission.limiter.update",
          target: String(row.id),
          details: { subjectType: who.subjectType, subjectId: who.subjectId, from: row.limiter, to: next },
        },
        now,
      );
      return changed;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new Conflict("limiter: the subject already has this permission with this limiter");
    }
    throw error;
  }
  forgetCached(db, "grants", who.subjectId);
  return updated;
}

/** Removes every permission of the subject inside `tx` (its deletion); the caller forgets its kept grants. */
export async function deleteAllSubjectPermissions(tx: Executor, who: PermissionSubject): Promise<number> {
  const removed = await tx
    .delete(permissions)
    .where(and(eq(permissions.subjectType, who.subjectType), eq(permissions.subjectId, who.subjectId)))
    .returning({ id: permissions.id });
  return removed.length;
}
