import type { Database } from "@studyflow/db";
import type { ParticipantRow } from "../participants/participant-repository";
import { studyForEvent } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";
import { lockProfileParticipant } from "./submit-response";

export interface CustomEventInput {
  studyKey: string;
  profileId: string;
  /** What happened, as the rules test it with checkEventKey (e.g. "KIT_ORDERED"). */
  eventKey: string;
  /** Read by the rules with getEventPayloadValueAsStr/AsNum and hasEventPayloadKey. */
  payload: Record<string, unknown>;
}

/**
 * The participant of a profile raises a CUSTOM event: the study's rules run on it with the event
 * key and payload, and the resulting state is saved, like any other participant event.
 */
export async function raiseCustomEvent(
  db: Database,
  input: CustomEventInput,
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    const { row, confidentialId } = await lockProfileParticipant(tx, study, input.profileId);
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
          participantIDForConfidentialResponses: confidentialId,
        },
      },
      eventCtx,
    );
    return { participant, warnings: eventCtx.failures };
  });
}
