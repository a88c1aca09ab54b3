import { and, eq, inArray } from "drizzle-orm";
import { permissions, profiles, type Executor, type StudyAction } from "@studyflow/db";
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
  const [profile] = await db
    .select({ id: profiles.id, mainProfile: profiles.mainProfile })
    .from(profiles)
    .where(and(eq(profiles.id, profileId), eq(profiles.userId, userId)))
    .limit(1);
  if (!profile) throw new Forbidden("profile does not belong to the signed-in user");
  return profile;
}
