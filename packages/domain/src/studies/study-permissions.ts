import { and, asc, eq, sql } from "drizzle-orm";
import {
  CASE_STUDY_ACTIONS,
  STUDY_ACTIONS,
  managementUsers,
  permissions,
  type Executor,
  type PermissionAction,
  type PermissionLimiter,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "./study-repository";

/**
 * The permissions management users hold for one study (case-backend's study permission routes):
 * resource type `study`, resource key the study, subject type `management-user`.
 */

export type StudyPermissionRow = typeof permissions.$inferSelect;

export interface StudyPermissionHolder {
  user: { id: string; username: string; email: string; imageUrl: string };
  permissions: StudyPermissionRow[];
}

/** Every action a study permission may name: CASE's and studyflow's own, or `*`. */
export const STUDY_PERMISSION_ACTIONS: readonly string[] = [...new Set(["*", ...CASE_STUDY_ACTIONS, ...STUDY_ACTIONS])];

/**
 * The management users holding a permission for exactly this study, by user id, each with those
 * permissions (oldest first). Subjects that are no management user (CLI or external token
 * subjects) are left out, as case-backend leaves out subjects it does not find.
 */
export async function listStudyPermissions(
  db: Executor,
  studyKey: string,
): Promise<Record<string, StudyPermissionHolder>> {
  await getStudy(db, studyKey);
  const rows = await db
    .select({ permission: permissions, user: managementUsers })
    .from(permissions)
    .innerJoin(managementUsers, sql`${managementUsers.id}::text = ${permissions.subjectId}`)
    .where(
      and(
        eq(permissions.resourceType, "study"),
        eq(permissions.subjectType, "management-user"),
        eq(permissions.studyKey, studyKey),
      ),
    )
    .orderBy(asc(permissions.id));
  const holders: Record<string, StudyPermissionHolder> = {};
  for (const { permission, user } of rows) {
    holders[user.id] ??= {
      user: { id: user.id, username: user.username, email: user.email, imageUrl: user.imageUrl },
      permissions: [],
    };
    holders[user.id]?.permissions.push(permission);
  }
  return holders;
}

export interface NewStudyPermission {
  subjectId: string;
  action: string;
  limiter?: PermissionLimiter | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Grants a management user a permission for the study, recording `study.permission.add`. The
 * same grant again is no error and writes nothing (`created: false`). @throws Invalid naming
 * `subjectId` (no such management user) or `action` (unknown), NotFound for an unknown study.
 */
export async function addStudyPermission(
  db: Executor,
  studyKey: string,
  input: NewStudyPermission,
  actor: string,
): Promise<{ permission: StudyPermissionRow; created: boolean }> {
  if (!STUDY_PERMISSION_ACTIONS.includes(input.action)) {
    throw new Invalid(`action: "${input.action}" is not a study action`);
  }
  const limiter = input.limiter && input.limiter.length > 0 ? input.limiter : null;
  const outcome = await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [user] = UUID.test(input.subjectId)
      ? await tx
          .select({ id: managementUsers.id })
          .from(managementUsers)
          .where(eq(managementUsers.id, input.subjectId))
          .limit(1)
      : [];
    if (!user) throw new Invalid(`subjectId: no management user "${input.subjectId}"`);
    const values = {
      subjectId: user.id,
      subjectType: "management-user" as const,
      resourceType: "study" as const,
      studyKey,
      action: input.action as PermissionAction,
      limiter,
    };
    const [created] = await tx.insert(permissions).values(values).onConflictDoNothing().returning();
    if (created) {
      await recordAudit(tx, {
        studyKey,
        actor,
        action: "study.permission.add",
        target: String(created.id),
        details: { subjectId: user.id, action: input.action, limiter },
      });
      return { permission: created, created: true };
    }
    const existing = (
      await tx
        .select()
        .from(permissions)
        .where(
          and(
            eq(permissions.subjectId, user.id),
            eq(permissions.subjectType, "management-user"),
            eq(permissions.resourceType, "study"),
            eq(permissions.studyKey, studyKey),
            eq(permissions.action, values.action),
          ),
        )
    ).find((row) => JSON.stringify(row.limiter ?? null) === JSON.stringify(limiter));
    if (!existing) throw new Error("permission vanished while it was being added; try again");
    return { permission: existing, created: false };
  });
  forgetCached(db, "grants", outcome.permission.subjectId);
  return outcome;
}

/**
 * Removes one permission of the study, recording `study.permission.remove`. @throws NotFound for
 * an unknown study or id, Invalid for a permission of another resource (case-backend: 400).
 */
export async function removeStudyPermission(
  db: Executor,
  studyKey: string,
  permissionId: string,
  actor: string,
): Promise<StudyPermissionRow> {
  const removed = await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    // ids are bigserial: anything else names no permission
    const id = /^[1-9][0-9]{0,17}$/.test(permissionId) ? Number(permissionId) : null;
    const [row] = id === null ? [] : await tx.select().from(permissions).where(eq(permissions.id, id)).for("update");
    if (!row) throw new NotFound(`permission "${permissionId}" not found`);
    if (row.resourceType !== "study" || row.studyKey !== studyKey || row.subjectType !== "management-user") {
      throw new Invalid(`permissionID: permission "${permissionId}" is not one of study "${studyKey}"`);
    }
    await tx.delete(permissions).where(eq(permissions.id, row.id));
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study.permission.remove",
      target: String(row.id),
      details: { subjectId: row.subjectId, action: row.action, limiter: row.limiter },
    });
    return row;
  });
  forgetCached(db, "grants", removed.subjectId);
  return removed;
}
