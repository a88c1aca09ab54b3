import type { Executor } from "@studyflow/db";
import { noTemplateError } from "../rules/message-refusal";
import { SCHEDULED_EMAIL_TEMPLATE } from "../messages/scheduled-emails";
import { renderParticipantMessage } from "../messages/participant-message-mail";
import { RESEARCHER_NOTIFICATION_TEMPLATE, renderResearcherNotification } from "../notifications/notification-mail";
import type { OutboxMessage } from "./outbox-repository";
import { renderInstanceTemplateMail } from "./instance-template-mail";
import { resolveRecipient, type Recipient } from "./resolve-recipient";
import { renderScheduledEmailRow } from "./scheduled-email-mail";
import type { RenderedMail } from "../mail/mail-document";
import { renderMail } from "./templates";
import { UndeliverableMessage } from "../mail/undeliverable-message";

export interface PreparedMail extends RenderedMail {
  to: string;
  /**
   * Set when the instance's template of the mail's type could not be rendered for this recipient
   * and the built-in mail goes instead: why, to be recorded with the row.
   */
  templateFailure?: string;
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
 * else an account mail (the instance's global template of its type, or the built-in mail).
 *
 * @throws UndeliverableMessage for a participant message whose study has no template for its
 *   type (deleted since the message was queued): its payload holds the participant's flags and
 *   linking codes, and only a template says which of them the study means to show.
 */
async function renderRow(
  db: Executor,
  message: OutboxMessage,
  recipient: Recipient,
  now: Date,
): Promise<RenderedMail & { templateFailure?: string }> {
  const { language } = recipient;
  if (message.template === SCHEDULED_EMAIL_TEMPLATE) return renderScheduledEmailRow(db, message);
  if (message.studyKey && message.confidentialId) {
    const rendered = await renderParticipantMessage(
      db,
      {
        studyKey: message.studyKey,
        messageType: message.template,
        payload: message.payload,
      },
      language,
      { profile: recipient.profile, now },
    );
    if (!rendered) throw new UndeliverableMessage(noTemplateError(message.studyKey, message.template));
    return rendered;
  }
  if (message.template === RESEARCHER_NOTIFICATION_TEMPLATE) return renderResearcherNotification(message.payload);
  return renderAccountMail(db, message, language);
}

/**
 * A participant's account mail: the instance's global template of its CASE message type when
 * there is one, else the built-in mail. A template that fails for this recipient (a limit on a
 * rendering's work reached with their values) gives way to the built-in mail rather than failing
 * the row: these mails are how a participant signs in, confirms or resets, and a template an
 * administrator got wrong must not lock anyone out. The failure goes with the row (lastError of
 * the sent row) and the worker's log.
 */
async function renderAccountMail(
  db: Executor,
  message: OutboxMessage,
  language: string | null,
): Promise<RenderedMail & { templateFailure?: string }> {
  const outcome = await renderInstanceTemplateMail(db, message.template, language, message.payload);
  if (outcome.kind === "rendered") {
    const { subject, ...body } = outcome.mail;
    // an empty subject in the template: the built-in one, which holds no secret either
    return { ...body, subject: subject ?? renderMail(message.template, language, message.payload).subject };
  }
  const builtIn = renderMail(message.template, language, message.payload);
  return outcome.kind === "failed" ? { ...builtIn, templateFailure: outcome.reason } : builtIn;
}

/**
 * The e-mail an outbox row becomes: recipient and rendered template. `now` dates what the
 * rendering issues (a CASE study template's login link token).
 *
 * @throws UndeliverableMessage when there is nobody to send it to or the template cannot be
 *   rendered; retrying would not change either.
 */
export async function prepareMail(db: Executor, message: OutboxMessage, now: Date): Promise<PreparedMail> {
  const recipient = await resolveRecipient(db, message);
  if (!recipient) throw new UndeliverableMessage(`no recipient: ${describeTarget(message)}`);
  return { to: recipient.address, ...(await renderRow(db, message, recipient, now)) };
}
