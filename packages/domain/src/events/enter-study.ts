import { eq } from "drizzle-orm";
import { confidentialIdMap, users, type Database, type Executor } from "@studyflow/db";
import type { OwnedProfile } from "../access/permissions";
import { hashedAccountIdInStudy, participantIdsInStudy } from "../participants/participant-ids";
import {
  insertOrLockParticipant,
  lockParticipantForEvent,
  type ParticipantRow,
} from "../participants/participant-repository";
import { getActiveStudy, studyForEvent, type StudyRow } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext, type EventContext } from "./event-runner";
import { nowSeconds } from "../foundation/clock";
import type { RuleFailureRecord } from "./rule-failures";

export interface ProfileEntry {
  study: StudyRow;
  userId: string;
  profile: OwnedProfile;
}

/**
 * Creates the profile's participant if it does not exist yet, or locks the existing one.
 * A new participant of an account-tracking study stores the account, pseudonymised, and the
 * main-profile flag; its confidential id is mapped back to the profile for messaging.
 */
export async function ensureProfileParticipant(
  tx: Executor,
  entry: ProfileEntry,
  ctx: DomainContext,
): Promise<{ row: ParticipantRow; created: boolean; confidentialId: string }> {
  const { study, profile } = entry;
  const ids = participantIdsInStudy(study, profile.id);
  let accountHash: string | null = null;
  if (study.trackAccount) {
    const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, entry.userId)).limit(1);
    if (user?.email) accountHash = hashedAccountIdInStudy(study, user.email);
  }
  const { row, created } = await insertOrLockParticipant(tx, {
    studyKey: study.key,
    participantId: ids.participantId,
    studyStatus: "active",
    enteredAt: nowSeconds(ctx),
    hashedAccountId: accountHash,
    isMainProfile: study.trackAccount && accountHash !== null ? profile.mainProfile : null,
  });
  if (created) {
    await tx
      .insert(confidentialIdMap)
      .values({ studyKey: study.key, confidentialId: ids.confidentialId, profileId: profile.id });
  }
  return { row, created, confidentialId: ids.confidentialId };
}

/** Runs the ENTER rules on a participant row, with the status it enters with, and saves the result. */
export async function runEnter(
  tx: Executor,
  study: StudyRow,
  row: ParticipantRow,
  status: string,
  confidentialId: string | undefined,
  ctx: EventContext,
): Promise<ParticipantRow> {
  const { participant } = await applyEvent(
    tx,
    {
      study,
      row,
      preset: { studyStatus: status },
      event: {
        type: "ENTER",
        studyKey: row.studyKey,
        ...(confidentialId ? { participantIDForConfidentialResponses: confidentialId } : {}),
      },
    },
    ctx,
  );
  return participant;
}

/**
 * A profile enters a study: a new participant is created and the ENTER rules run; a participant
 * that had left (any status but active) is re-activated and the ENTER rules run again; an active
 * one is returned as it is.
 */
export async function enterStudy(
  db: Database,
  input: { studyKey: string; userId: string; profile: OwnedProfile },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; created: boolean; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const cached = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    // A profile that was a participant already (re-entry): one statement locks it with its study.
    const ids = participantIdsInStudy(cached, input.profile.id);
    const existing = await lockParticipantForEvent(tx, cached.key, ids.participantId);
    if (existing?.studyStatus === "active") return { participant: existing, created: false, warnings: [] };
    if (existing) {
      const participant = await runEnter(tx, cached, existing, "active", ids.confidentialId, eventCtx);
      return { participant, created: false, warnings: eventCtx.failures };
    }
    const study = await getActiveStudy(tx, input.studyKey);
    const { row, created, confidentialId } = await ensureProfileParticipant(
      tx,
      { study, userId: input.userId, profile: input.profile },
      eventCtx,
    );
    if (!created && row.studyStatus === "active") return { participant: row, created, warnings: [] };
    const participant = await runEnter(tx, study, row, "active", confidentialId, eventCtx);
    return { participant, created, warnings: eventCtx.failures };
  });
}
