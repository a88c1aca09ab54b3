import type { Executor } from "@studyflow/db";
import type { OutboxMessage } from "./outbox-repository";
import { resolveRecipient } from "./resolve-recipient";
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
 * The e-mail an outbox row becomes: recipient and rendered template.
 *
 * @throws UndeliverableMessage when there is nobody to send it to or the template cannot be
 *   rendered; retrying would not change either.
 */
export async function prepareMail(db: Executor, message: OutboxMessage): Promise<PreparedMail> {
  const recipient = await resolveRecipient(db, message);
  if (!recipient) throw new UndeliverableMessage(`no recipient: ${describeTarget(message)}`);
  return { to: recipient.address, ...renderMail(message.template, recipient.language, message.payload) };
}
