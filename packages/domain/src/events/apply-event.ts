import type { ParticipantState, StudyEvent } from "@studyflow/engine";
import type { Executor } from "@studyflow/db";
import { saveParticipantState, toEngineState, type ParticipantRow } from "../participants/participant-repository";
import { nowSeconds, runEventRules, type DomainContext } from "./event-runner";
import { persistEffects, persistReports } from "./persist-outcome";
import { storeResponse, type ArrivedResponse } from "./store-response";

/** One participant event, on a participant row the caller has locked in its transaction. */
export interface ParticipantEvent {
  row: ParticipantRow;
  event: StudyEvent;
  /** Set on the state before the rules run, so they see it and may override it (LEAVE: `exited`). */
  preset?: Partial<ParticipantState>;
  /** Applied to the rules' state before it is saved (MERGE: submissions of both participants). */
  settle?: (state: ParticipantState) => ParticipantState;
  /** SUBMIT: the response, stored with the new state and linked from the event's reports. */
  response?: { stored: ArrivedResponse; confidentialId: string };
  /** Unix seconds written as modifiedAt; defaults to the context's clock. */
  at?: number;
}

export interface AppliedEvent {
  participant: ParticipantRow;
  /** The stored response (SUBMIT), or null when there was none or every item was confidential. */
  responseId: string | null;
}

/**
 * The one sequence every participant event goes through, inside the caller's transaction: the
 * study's current rules run, their side effects are persisted, the new state is saved (guarded by
 * the version that was read), the response is stored, then the reports. Either all of it commits
 * with the caller's other writes, or none of it.
 */
export async function applyEvent(tx: Executor, input: ParticipantEvent, ctx: DomainContext): Promise<AppliedEvent> {
  const { row, event } = input;
  const outcome = await runEventRules(tx, { ...toEngineState(row), ...input.preset }, event, ctx);
  // Effects first: a rule that removes confidential responses acts on the ones stored before this event.
  await persistEffects(tx, event.studyKey, outcome.effects, ctx.clock());
  const state = input.settle ? input.settle(outcome.state) : outcome.state;
  const participant = await saveParticipantState(tx, row, state, input.at ?? nowSeconds(ctx));
  const responseId = input.response
    ? await storeResponse(
        tx,
        event.studyKey,
        input.response.stored,
        input.response.confidentialId,
        participant.currentStudySession,
      )
    : null;
  await persistReports(tx, { studyKey: event.studyKey, eventType: event.type, responseId, reports: outcome.reports });
  return { participant, responseId };
}
