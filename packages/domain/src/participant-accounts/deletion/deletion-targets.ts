import { and, asc, eq, inArray } from "drizzle-orm";
import { participants, profiles, studies, type Executor } from "@studyflow/db";
import { participantIdsInStudy } from "../../participants/participant-ids";

/** One participant of a deleted account: a profile's participant in one study. */
export interface DeletionTarget {
  studyKey: string;
  participantId: string;
  confidentialId: string;
  /** How account_deletions.progress names it: study key and participant id. */
  progressKey: string;
}

export interface DeletionScope {
  profileIds: string[];
  /** Every participant of every profile in every study, in a fixed order (study key, participant id). */
  targets: DeletionTarget[];
}

export const progressKeyOf = (studyKey: string, participantId: string) => `${studyKey}/${participantId}`;

/**
 * What a deletion has to take out: the participants the account's profiles have in any study,
 * active or not (participant ids derive from each study's secret, so every study is looked at:
 * one query per study, over the account's handful of profiles).
 */
export async function deletionScope(db: Executor, userId: string): Promise<DeletionScope> {
  const owned = await db
    .select({ id: profiles.id })
    .from(profiles)
    .where(eq(profiles.userId, userId))
    .orderBy(asc(profiles.id));
  const profileIds = owned.map((profile) => profile.id);
  if (profileIds.length === 0) return { profileIds, targets: [] };
  const all = await db
    .select({ key: studies.key, secret: studies.secret, idMappingMethod: studies.idMappingMethod })
    .from(studies)
    .orderBy(asc(studies.key));
  const targets: DeletionTarget[] = [];
  for (const study of all) {
    const byParticipant = new Map(
      profileIds.map((profileId) => {
        const ids = participantIdsInStudy(study, profileId);
        return [ids.participantId, ids.confidentialId] as const;
      }),
    );
    const found = await db
      .select({ participantId: participants.participantId })
      .from(participants)
      .where(and(eq(participants.studyKey, study.key), inArray(participants.participantId, [...byParticipant.keys()])))
      .orderBy(asc(participants.participantId));
    for (const { participantId } of found) {
      targets.push({
        studyKey: study.key,
        participantId,
        confidentialId: byParticipant.get(participantId) ?? "",
        progressKey: progressKeyOf(study.key, participantId),
      });
    }
  }
  return { profileIds, targets };
}
