import { sql } from "drizzle-orm";
import type { ImmediateMessage } from "@studyflow/engine";
import { emailTemplates, messageTemplates, outgoingMessages, type Executor } from "@studyflow/db";

/**
 * A participant message goes out only through a template of its study: a template shows what the
 * study chose to show. Without one nothing is sent (as on the reference platform), never a
 * built-in mail listing the participant's flags and linking codes. The three places that can find
 * a template missing (SEND_MESSAGE_NOW as its rule runs, a scheduled message when it is due, the
 * outbox when it renders) fail the message with the same reason.
 */

/**
 * How long a SEND_MESSAGE_NOW message stays worth sending: a day, as on the reference platform.
 * After a mail outage the outbox marks it expired rather than sending "now" days late. A due
 * scheduled message gets the same day from when it enters the outbox.
 */
export const SEND_MESSAGE_NOW_VALIDITY_MS = 24 * 3_600_000;

/** Why a participant message of a type without any template was not sent (the outbox's last_error). */
export function noTemplateError(studyKey: string, messageType: string): string {
  return (
    `no template for message type "${messageType}" in study "${studyKey}" (save one as a study e-mail ` +
    `template with POST /v1/messaging/email-templates/study-templates/${studyKey}, or upload one with ` +
    `PUT /v1/studies/${studyKey}/message-templates/${messageType}/{language}); the message was not sent`
  );
}

/**
 * Whether the study has a template for the message type: a CASE study e-mail template, or a
 * studyflow message template in any language.
 */
export async function hasMessageTemplate(db: Executor, studyKey: string, messageType: string): Promise<boolean> {
  const [row] = await db.execute<{ found: boolean }>(sql`
    select exists (
      select 1 from ${emailTemplates}
      where ${emailTemplates.studyKey} = ${studyKey} and ${emailTemplates.messageType} = ${messageType}
    ) or exists (
      select 1 from ${messageTemplates}
      where ${messageTemplates.studyKey} = ${studyKey} and ${messageTemplates.messageType} = ${messageType}
    ) as found`);
  return row?.found === true;
}

/**
 * The database's answer to SEND_MESSAGE_NOW's question (EngineServices.refuseMessage) for one
 * study, inside the event's transaction: null when the study has a template for the type; else the
 * message is recorded as a `failed` outbox row with the reason, so it shows with the study's
 * failed e-mails, and the reason is returned for the rule failure. The row commits with the event
 * (a strict study's rejected event takes it back; its rule failure is recorded all the same).
 * What the study has is asked once per type for the services' lifetime: one event, or one batch.
 */
export function messageRefusalFor(
  tx: Executor,
  studyKey: string,
  clock: () => number,
  expiresAfterMs: number,
): (message: ImmediateMessage) => Promise<string | null> {
  const known = new Map<string, boolean>();
  return async (message) => {
    let templated = known.get(message.messageType);
    if (templated === undefined) {
      templated = await hasMessageTemplate(tx, studyKey, message.messageType);
      known.set(message.messageType, templated);
    }
    if (templated) return null;
    const reason = noTemplateError(studyKey, message.messageType);
    // As a due scheduled message's failed row: with its payload, so that an operator who uploads
    // the template and sets the row back to pending sends what the rule meant to send.
    await tx.insert(outgoingMessages).values({
      template: message.messageType,
      studyKey,
      confidentialId: message.confidentialId,
      language: message.languageOverride ?? null,
      payload: message.payload,
      status: "failed",
      lastError: reason,
      expiresAt: new Date(clock() + expiresAfterMs),
    });
    return reason;
  };
}
