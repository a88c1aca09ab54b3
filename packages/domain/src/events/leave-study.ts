import { rawClientOf, type Database } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { participantIdsForProfile } from "../participants/participant-ids";
import type { ParticipantRow } from "../participants/participant-repository";
import { lockEventParticipant, studyForEvent } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";

/**
 * The profile's participant leaves: status `exited` first (so LEAVE rules see it and may
 * override it), then the LEAVE rules; its confidential responses are removed. Returns the
 * participant as it is after the rules.
 */
export async function leaveStudy(
  db: Database,
  input: { studyKey: string; profileId: string },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    const ids = participantIdsForProfile(study.secret, input.profileId);
    const row = await lockEventParticipant(
      tx,
      study,
      ids.participantId,
      () => new NotFound(`participant "${ids.participantId}" not found in study "${study.key}"`),
    );
    if (row.studyStatus !== "active") {
      throw new Conflict(`participant is not active in study "${study.key}" (status "${row.studyStatus}")`);
    }
    const { participant } = await applyEvent(
      tx,
      {
        study,
        row,
        preset: { studyStatus: "exited" },
        event: { type: "LEAVE", studyKey: study.key, participantIDForConfidentialResponses: ids.confidentialId },
      },
      eventCtx,
    );
    // a prepared statement, as the event's other statements (see rawClientOf)
    await rawClientOf(tx)`delete from confidential_responses
      where study_key = ${study.key} and confidential_id = ${ids.confidentialId}`;
    return { participant, warnings: eventCtx.failures };
  });
}
