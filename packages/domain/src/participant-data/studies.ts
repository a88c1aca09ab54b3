import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { participants, profiles, studies, type Executor } from "@studyflow/db";
import { participantIdsInStudy } from "../participants/participant-ids";
import type { StudyRow } from "../studies/study-repository";

/**
 * The studies with a status (every study for ""), by key: what CASE's public study list shows.
 * Rows carry the secret; presenters never show it.
 */
export async function listStudiesByStatus(db: Executor, status: string): Promise<StudyRow[]> {
  return db
    .select()
    .from(studies)
    .where(status === "" ? undefined : eq(studies.status, status as StudyRow["status"]))
    .orderBy(asc(studies.key));
}

export interface ParticipatingStudy {
  study: StudyRow;
  /** The user's profiles that are active participants of the study, in the order of the profiles' creation. */
  profileIds: string[];
}

/**
 * The studies in which at least one of the user's profiles is an active participant, with those
 * profiles (case-backend's participating studies). Ids are derived per study and profile and
 * looked up in one read; no table maps a profile to its studies.
 */
export async function listParticipatingStudies(db: Executor, userId: string): Promise<ParticipatingStudy[]> {
  const ownProfiles = await db
    .select({ id: profiles.id })
    .from(profiles)
    .where(eq(profiles.userId, userId))
    .orderBy(desc(profiles.mainProfile), asc(profiles.createdAt), asc(profiles.id));
  if (ownProfiles.length === 0) return [];
  const all = await db.select().from(studies).orderBy(asc(studies.key));
  if (all.length === 0) return [];
  // study key → participant id → profile id
  const pairs = new Map(
    all.map((study) => [
      study.key,
      new Map(ownProfiles.map((profile) => [participantIdsInStudy(study, profile.id).participantId, profile.id])),
    ]),
  );
  const ids = [...pairs.values()].flatMap((byId) => [...byId.keys()]);
  const rows = await db
    .select({ studyKey: participants.studyKey, participantId: participants.participantId })
    .from(participants)
    .where(
      and(
        inArray(participants.studyKey, [...pairs.keys()]),
        inArray(participants.participantId, ids),
        eq(participants.studyStatus, "active"),
      ),
    );
  const active = new Set(rows.map((row) => `${row.studyKey}\u0000${row.participantId}`));
  return all.flatMap((study) => {
    const profileIds = [...pairs.get(study.key)!].flatMap(([participantId, profileId]) =>
      // a row of another study with the same id is no match: only this study's own id is the profile's
      active.has(`${study.key}\u0000${participantId}`) ? [profileId] : [],
    );
    return profileIds.length > 0 ? [{ study, profileIds }] : [];
  });
}
