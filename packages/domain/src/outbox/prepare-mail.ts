import type { Executor } from "@studyflow/db";
import { noTemplateError } from "../messages/message-refusal";
import { SCHEDULED_EMAIL_TEMPLATE } from "../messages/scheduled-emails";
import { renderParticipantMessage } from "../messages/participant-message-mail";
import { RESEARCHER_NOTIFICATION_TEMPLATE, renderResearcherNotification } from "../notifications/notification-mail";
import type { OutboxMessage } from "./outbox-repository";
import { resolveRecipient } from "./resolve-recipient";
import { renderScheduledEmailRow } from "./scheduled-email-mail";
import { renderMail, type RenderedMail } from "./templates";
import { UndeliverableMessage } from "./undeliverable-message";

export interface PreparedMail extends RenderedMail {
  to: string;
}

/** Says which lookup found nobody; the row itself carries the ids. */
function describeTarget(message: Pick<OutboxMessage, "userId" | "studyKey" | "confidentialId">): string {
  if (message.userId) return "the message's user has no account";
  if (message.studyKey && message.confidentialId) return "no account is linked to the participant's confidential id";
  return "the message names no address, user or study participant";
}

/**
 * The rendering of a row: a case-admin scheduled e-mail (rendered when its slot fired); a
 * participant message (a study and a participant's confidential id: scheduled or
 * SEND_MESSAGE_NOW) only through the study's template for its type; a researcher notification;
 * else the built-in account mails.
 *
 * @throws UndeliverableMessage for a participant message whose study has no template for its
 *   type (deleted since the message was queued): its payload holds the participant's flags and
 *   linking codes, and only a template says which of them the study means to show.
 */
async function renderRow(db: Executor, message: OutboxMessage, language: string | null): Promise<RenderedMail> {
  if (message.template === SCHEDULED_EMAIL_TEMPLATE) return renderScheduledEmailRow(db, message);
  if (message.studyKey && message.confidentialId) {
    const rendered = await renderParticipantMessage(
      db,
      { studyKey: message.studyKey, messageType: message.template, payload: message.payload },
      language,
    );
    if (!rendered) throw new UndeliverableMessage(noTemplateError(message.studyKey, message.template));
    return rendered;
  }
  if (message.template === RESEARCHER_NOTIFICATION_TEMPLATE) return renderResearcherNotification(message.payload);
  return renderMail(message.template, language, message.payload);
}

/**
 * The e-mail an outbox row becomes: recipient and rendered template.
 *
 * @throws UndeliverableMessage when there is nobody to send it to or the template cannot be
 *   rendered; retrying would not change either.
 */
export async function prepareMail(db: Executor, message: OutboxMessage): Promise<PreparedMail> {
  const recipient = await resolveRecipient(db, message);
  if (!recipient) throw new UndeliverableMessage(`no recipient: ${describeTarget(message)}`);
  return { to: recipient.address, ...(await renderRow(db, message, recipient.language)) };
}
