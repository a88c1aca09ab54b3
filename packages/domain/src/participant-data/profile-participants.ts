import { and, eq, inArray } from "drizzle-orm";
import { participants, type Executor } from "@studyflow/db";
import { participantIdsInStudy } from "../participants/participant-ids";
import type { ParticipantRow } from "../participants/participant-repository";
import type { StudyRow } from "../studies/study-repository";

/** A profile's participant in a study, when it has one. */
export interface ProfileParticipant {
  profileId: string;
  participant: ParticipantRow;
}

/**
 * The participants of the given profiles in one study, in the order of the profiles, in one read;
 * profiles without a participant there are left out. Ids derive from the study's secret, so no
 * profile id is ever stored with study data.
 */
export async function participantsOfProfiles(
  db: Executor,
  study: StudyRow,
  profileIds: readonly string[],
): Promise<ProfileParticipant[]> {
  if (profileIds.length === 0) return [];
  const idOf = new Map(
    profileIds.map((profileId) => [profileId, participantIdsInStudy(study, profileId).participantId]),
  );
  const rows = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, study.key), inArray(participants.participantId, [...idOf.values()])));
  const byId = new Map(rows.map((row) => [row.participantId, row]));
  return profileIds.flatMap((profileId) => {
    const participant = byId.get(idOf.get(profileId)!);
    return participant ? [{ profileId, participant }] : [];
  });
}

/** The participant id of a profile in a study. */
export const participantIdOfProfile = (study: StudyRow, profileId: string) =>
  participantIdsInStudy(study, profileId).participantId;
