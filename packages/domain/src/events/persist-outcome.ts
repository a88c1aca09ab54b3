import { and, eq } from "drizzle-orm";
import type { Report, SideEffect } from "@studyflow/engine";
import { confidentialResponses, outgoingMessages, rawClientOf, researcherMessages, type Executor } from "@studyflow/db";
import { SEND_MESSAGE_NOW_VALIDITY_MS } from "../rules/message-refusal";

// The persist steps of every participant event, shared by the one-participant pipeline
// (apply-event.ts) and the bulk batch path (task-pipeline/process-chunk.ts).

export interface ReportsOfEvent {
  studyKey: string;
  eventType: string;
  /** The stored survey response that caused the event (SUBMIT only). */
  responseId?: string | null;
  reports: readonly Report[];
}

/**
 * Persists what the rules produced besides the state, in the event's transaction and in order.
 * `nowMs` is the event's time (milliseconds), from which messages' expiry is counted.
 */
export async function persistEffects(
  tx: Executor,
  studyKey: string,
  effects: readonly SideEffect[],
  nowMs: number,
): Promise<void> {
  for (const effect of effects) {
    switch (effect.kind) {
      case "notify-researcher":
        await tx.insert(researcherMessages).values({
          studyKey,
          participantId: effect.participantId,
          type: effect.messageType,
          payload: effect.payload,
        });
        break;
      case "send-message":
        // Rendered at delivery through the study's template for the type, in the override's or the
        // recipient's language. SEND_MESSAGE_NOW checked that the study has one (refuseMessage);
        // one deleted in between fails the message at delivery: there is no built-in fallback.
        await tx.insert(outgoingMessages).values({
          template: effect.messageType,
          studyKey,
          confidentialId: effect.confidentialId,
          language: effect.languageOverride ?? null,
          payload: effect.payload,
          expiresAt: new Date(nowMs + SEND_MESSAGE_NOW_VALIDITY_MS),
        });
        break;
      case "remove-confidential-responses": {
        const owner = and(
          eq(confidentialResponses.studyKey, studyKey),
          eq(confidentialResponses.confidentialId, effect.confidentialId),
        );
        await tx
          .delete(confidentialResponses)
          .where(effect.key === undefined ? owner : and(owner, eq(confidentialResponses.key, effect.key)));
        break;
      }
    }
  }
}

/**
 * Stores an event's reports in one prepared statement of postgres.js (see rawClientOf), the reports
 * as one JSON parameter whatever their number, handed to the connection before this returns: an
 * event can send it with its COMMIT (EventContext.sendWithCommit) as well as await it.
 */
export function persistReports(tx: Executor, outcome: ReportsOfEvent): Promise<void> {
  if (outcome.reports.length === 0) return Promise.resolve();
  const rows = outcome.reports.map((report) => ({
    participant_id: report.participantId,
    key: report.key,
    timestamp: report.timestamp,
    data: report.data,
  }));
  return rawClientOf(tx)`
    insert into reports (study_key, participant_id, key, response_id, event_type, timestamp, data)
    select ${outcome.studyKey}, r.participant_id, r.key, ${outcome.responseId ?? null}::uuid, ${outcome.eventType},
      r.timestamp, r.data
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      as r(participant_id text, key text, timestamp bigint, data jsonb)`
    .execute()
    .then(() => undefined);
}
