import { and, eq, inArray } from "drizzle-orm";
import { permissions, profiles, type Executor, type StudyAction } from "@studyflow/db";
import { readCacheOf } from "../cache/read-cache";
import { Forbidden } from "../errors";

export interface ManagementSubject {
  subject: string;
  isAdmin: boolean;
}

/** Admins pass; others need a permission for this study (or "*") and this action (or "*"). */
export async function assertStudyPermission(
  db: Executor,
  who: ManagementSubject,
  studyKey: string,
  action: StudyAction,
): Promise<void> {
  if (who.isAdmin) return;
  const cache = readCacheOf(db);
  if (cache) {
    // All of the subject's grants, kept together: a missing permission is answered from memory too.
    const grants = await cache.get("grants", who.subject, () =>
      db
        .select({ studyKey: permissions.studyKey, action: permissions.action })
        .from(permissions)
        .where(eq(permissions.subjectId, who.subject)),
    );
    const allowed = grants?.some(
      (grant) =>
        (grant.studyKey === studyKey || grant.studyKey === "*") && (grant.action === action || grant.action === "*"),
    );
    if (!allowed) throw new Forbidden(`missing permission "${action}" for study "${studyKey}"`);
    return;
  }
  const [grant] = await db
    .select({ id: permissions.id })
    .from(permissions)
    .where(
      and(
        eq(permissions.subjectId, who.subject),
        inArray(permissions.studyKey, [studyKey, "*"]),
        inArray(permissions.action, [action, "*"]),
      ),
    )
    .limit(1);
  if (!grant) throw new Forbidden(`missing permission "${action}" for study "${studyKey}"`);
}

export interface OwnedProfile {
  id: string;
  mainProfile: boolean;
}

/** The profile must belong to the signed-in user; anything else is indistinguishable from a stranger's. */
export async function assertProfileOfUser(db: Executor, userId: string, profileId: string): Promise<OwnedProfile> {
  const cache = readCacheOf(db);
  if (cache) {
    // Kept by profile, with its owner: only profiles that exist are kept, so a new one needs no announcement.
    const owned = await cache.get("profile", profileId, async () => {
      const [row] = await db
        .select({ id: profiles.id, userId: profiles.userId, mainProfile: profiles.mainProfile })
        .from(profiles)
        .where(eq(profiles.id, profileId))
        .limit(1);
      return row;
    });
    if (!owned || owned.userId !== userId) throw new Forbidden("profile does not belong to the signed-in user");
    return { id: owned.id, mainProfile: owned.mainProfile };
  }
  const [profile] = await db
    .select({ id: profiles.id, mainProfile: profiles.mainProfile })
    .from(profiles)
    .where(and(eq(profiles.id, profileId), eq(profiles.userId, userId)))
    .limit(1);
  if (!profile) throw new Forbidden("profile does not belong to the signed-in user");
  return profile;
}
