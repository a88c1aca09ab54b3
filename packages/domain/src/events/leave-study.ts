import { rawClientOf, type Database, type Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { participantIdsInStudy } from "../participants/participant-ids";
import type { ParticipantRow } from "../participants/participant-repository";
import { studyForEvent } from "../studies/study-repository";
import { lockEventParticipant } from "../participants/participant-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext, type EventContext, type StudyForRules } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";

export interface LockedLeave {
  study: StudyForRules;
  /** The participant, locked by the caller in its transaction. */
  row: ParticipantRow;
  confidentialId: string;
  /**
   * The status the participant ends with whatever the rules set: CASE's `accountDeleted` when its
   * profile or account goes. Absent: `exited`, unless the LEAVE rules chose another.
   */
  finalStatus?: string;
}

/**
 * The LEAVE sequence inside the caller's transaction, for every operation that makes a participant
 * leave (the leave route, a removed profile, a deleted account): status `exited` first (so LEAVE
 * rules see it and may override it), then the LEAVE rules, then the participant's confidential
 * responses are removed. Returns the participant as saved.
 */
export async function leaveLockedParticipant(
  tx: Executor,
  input: LockedLeave,
  eventCtx: EventContext,
): Promise<ParticipantRow> {
  const { study, row, confidentialId, finalStatus } = input;
  const { participant } = await applyEvent(
    tx,
    {
      study,
      row,
      preset: { studyStatus: "exited" },
      event: { type: "LEAVE", studyKey: study.key, participantIDForConfidentialResponses: confidentialId },
      ...(finalStatus === undefined ? {} : { settle: (state) => ({ ...state, studyStatus: finalStatus }) }),
    },
    eventCtx,
  );
  // a prepared statement, as the event's other statements (see rawClientOf); the last of the
  // event, so it goes to the server with the COMMIT
  eventCtx.sendWithCommit(
    rawClientOf(tx)`delete from confidential_responses
      where study_key = ${study.key} and confidential_id = ${confidentialId}`.execute(),
  );
  return participant;
}

/**
 * The profile's participant leaves (see leaveLockedParticipant); only an active participant can.
 * Returns the participant as it is after the rules.
 */
export async function leaveStudy(
  db: Database,
  input: { studyKey: string; profileId: string },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    const ids = participantIdsInStudy(study, input.profileId);
    const row = await lockEventParticipant(
      tx,
      study,
      ids.participantId,
      () => new NotFound(`participant "${ids.participantId}" not found in study "${study.key}"`),
    );
    if (row.studyStatus !== "active") {
      throw new Conflict(`participant is not active in study "${study.key}" (status "${row.studyStatus}")`);
    }
    const participant = await leaveLockedParticipant(tx, { study, row, confidentialId: ids.confidentialId }, eventCtx);
    return { participant, warnings: eventCtx.failures };
  });
}
