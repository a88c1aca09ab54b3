import { and, eq } from "drizzle-orm";
import {
  confidentialResponses,
  participants,
  reports,
  researcherMessages,
  surveyResponses,
  type Database,
  type Executor,
} from "@studyflow/db";
import type { OwnedProfile } from "../access/permissions";
import { Conflict, NotFound } from "../errors";
import { confidentialIdInStudy } from "../participants/participant-ids";
import { lockParticipant, toEngineState, type ParticipantRow } from "../participants/participant-repository";
import { getActiveStudy, type StudyRow } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { ensureProfileParticipant, runEnter } from "./enter-study";
import { inEventTransaction, type DomainContext, type EventContext } from "./event-runner";
import { nowSeconds } from "../foundation/clock";
import type { RuleFailureRecord } from "./rule-failures";

export interface MergeInput {
  studyKey: string;
  userId: string;
  profile: OwnedProfile;
  temporaryParticipantId: string;
  /** A temporary participant older than this can no longer be claimed. */
  maxAgeSeconds: number;
}

/** Latest submission wins per survey key. */
export function mergeLastSubmissions(
  target: Record<string, number>,
  incoming: Record<string, number>,
): Record<string, number> {
  const merged = { ...target };
  for (const [key, at] of Object.entries(incoming)) {
    if (!(key in merged) || (merged[key] ?? 0) < at) merged[key] = at;
  }
  return merged;
}

export interface ParticipantMerge {
  study: StudyRow;
  /** Locked by the caller; it takes the incoming participant's data. */
  target: ParticipantRow;
  /** Where the incoming participant's confidential responses move. */
  targetConfidentialId: string;
  /** Locked by the caller; deleted once merged. */
  incoming: ParticipantRow;
  at: number;
}

/**
 * What every merge of one participant into another does, inside the caller's transaction: the
 * MERGE rules run on the target with the incoming state readable as incomingState, submissions
 * merge (latest wins), responses/reports/confidential responses/researcher messages move to the
 * target, and the incoming participant is deleted.
 */
export async function mergeParticipantInto(
  tx: Executor,
  merge: ParticipantMerge,
  eventCtx: EventContext,
): Promise<ParticipantRow> {
  const { study, target, incoming } = merge;
  const { participant } = await applyEvent(
    tx,
    {
      study,
      row: target,
      event: {
        type: "MERGE",
        studyKey: study.key,
        mergeWithParticipant: toEngineState(incoming),
        participantIDForConfidentialResponses: merge.targetConfidentialId,
      },
      settle: (state) => ({
        ...state,
        lastSubmissions: mergeLastSubmissions(state.lastSubmissions, incoming.lastSubmissions),
      }),
      at: merge.at,
    },
    eventCtx,
  );

  const from = incoming.participantId;
  const to = participant.participantId;
  await tx
    .update(surveyResponses)
    .set({ participantId: to })
    .where(and(eq(surveyResponses.studyKey, study.key), eq(surveyResponses.participantId, from)));
  await tx
    .update(reports)
    .set({ participantId: to })
    .where(and(eq(reports.studyKey, study.key), eq(reports.participantId, from)));
  await tx
    .update(researcherMessages)
    .set({ participantId: to })
    .where(and(eq(researcherMessages.studyKey, study.key), eq(researcherMessages.participantId, from)));
  await tx
    .update(confidentialResponses)
    .set({ confidentialId: merge.targetConfidentialId })
    .where(
      and(
        eq(confidentialResponses.studyKey, study.key),
        eq(confidentialResponses.confidentialId, confidentialIdInStudy(study, from)),
      ),
    );
  await tx.delete(participants).where(eq(participants.id, incoming.id));
  return participant;
}

/**
 * Claims a temporary participant for a profile, in one transaction: a missing target is created
 * (ENTER rules first), the MERGE rules run with the temporary state readable as incomingState,
 * submissions merge, responses/reports/confidential responses/researcher messages move to the
 * target, and the temporary participant is deleted. The row lock on the temporary participant
 * makes concurrent merges of it queue up: the first wins, the others find it gone.
 */
export async function mergeTemporaryParticipant(
  db: Database,
  input: MergeInput,
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const temp = await lockParticipant(tx, study.key, input.temporaryParticipantId);
    if (!temp) throw new NotFound("temporary participant not found");
    if (temp.studyStatus !== "temporary") throw new Conflict("participant is not a temporary participant");
    const now = nowSeconds(ctx);
    if (now - temp.enteredAt > input.maxAgeSeconds) {
      throw new Conflict("temporary participant is too old to be merged");
    }

    const ensured = await ensureProfileParticipant(
      tx,
      { study, userId: input.userId, profile: input.profile },
      eventCtx,
    );
    if (ensured.row.participantId === temp.participantId) throw new Conflict("cannot merge a participant into itself");
    const target = ensured.created
      ? await runEnter(tx, study, ensured.row, "active", ensured.confidentialId, eventCtx)
      : ensured.row;

    const participant = await mergeParticipantInto(
      tx,
      { study, target, targetConfidentialId: ensured.confidentialId, incoming: temp, at: now },
      eventCtx,
    );
    return { participant, warnings: eventCtx.failures };
  });
}
