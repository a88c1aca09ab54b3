import type { Database, Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { participantIdsOf } from "../participants/participant-ids";
import { lockEventParticipant, type ParticipantRow } from "../participants/participant-repository";
import { studyForEvent, type StudyRow } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";
import { lockProfileParticipant, type EventParticipant } from "./submit-response";

export type CustomEventInput = EventParticipant & {
  studyKey: string;
  /** What happened, as the rules test it with checkEventKey (e.g. "KIT_ORDERED"). */
  eventKey: string;
  /** Read by the rules with getEventPayloadValueAsStr/AsNum and hasEventPayloadKey. */
  payload: Record<string, unknown>;
};

/**
 * A researcher's event for a participant by id: any participant the study holds (virtual ones are
 * managed this way), except one whose account was deleted, which takes no new data.
 */
async function lockParticipantById(tx: Executor, study: StudyRow, participantId: string) {
  const row = await lockEventParticipant(
    tx,
    study,
    participantId,
    () => new NotFound(`participant "${participantId}" not found in study "${study.key}"`),
  );
  if (row.studyStatus === "accountDeleted") {
    throw new Conflict(`participant "${participantId}" has status "accountDeleted" and takes no events`);
  }
  return { row, ids: participantIdsOf(study, row.participantId) };
}

/**
 * A CUSTOM event for a participant (the profile's own, or one a researcher names): the study's
 * rules run on it with the event key and payload, and the resulting state is saved, like any
 * other participant event.
 */
export async function raiseCustomEvent(
  db: Database,
  input: CustomEventInput,
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    const { row, ids } =
      "profileId" in input
        ? await lockProfileParticipant(tx, study, input.profileId)
        : await lockParticipantById(tx, study, input.participantId);
    const { participant } = await applyEvent(
      tx,
      {
        study,
        row,
        event: {
          type: "CUSTOM",
          studyKey: study.key,
          eventKey: input.eventKey,
          payload: input.payload,
          // derived only if a rule reads it
          get participantIDForConfidentialResponses() {
            return ids.confidentialId;
          },
        },
      },
      eventCtx,
    );
    return { participant, warnings: eventCtx.failures };
  });
}
