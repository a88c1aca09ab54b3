import { eq } from "drizzle-orm";
import { users, type Executor } from "@studyflow/db";
import type { OutboxMessage } from "./outbox-repository";
import { mailHeadersOf, subjectLine, type RenderedMail } from "../mail/mail-document";
import type { ScheduledEmailPayload } from "../messages/scheduled-emails";
import { UndeliverableMessage } from "../mail/undeliverable-message";

/**
 * Why an account no longer takes a scheduled e-mail queued for it: locked, being deleted, or
 * unsubscribed from the mail's type since the mail was queued (a backlog can hold it for a while).
 * Null when it still does.
 */
async function refusalOf(db: Executor, userId: string | null, messageType: string): Promise<string | null> {
  if (!userId) return null;
  const [account] = await db
    .select({
      lockedAt: users.lockedAt,
      deletionRequestedAt: users.deletionRequestedAt,
      weekly: users.subscribedToWeekly,
      newsletter: users.subscribedToNewsletter,
    })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  // no account: resolveRecipient has said so already
  if (!account) return null;
  if (account.lockedAt) return "the account was locked after the mail was queued";
  if (account.deletionRequestedAt) return "the account is being deleted";
  if (messageType === "weekly" && !account.weekly) return "the account unsubscribed from weekly messages";
  if (messageType === "newsletter" && !account.newsletter) return "the account unsubscribed from the newsletter";
  return null;
}

/**
 * The e-mail of a case-admin scheduled e-mail's outbox row: subject and HTML as rendered when the
 * slot fired (fireDueScheduledEmails), sent as HTML only, as case-backend sends them (a template
 * is an HTML document; a text part made from it would be a guess). The recipient's preferences are
 * read again at delivery: a mail that waited in a backlog is not sent to an account that has
 * unsubscribed, been locked or asked for its deletion since.
 *
 * @throws UndeliverableMessage when the payload has no HTML, or the account no longer takes it.
 */
export async function renderScheduledEmailRow(
  db: Executor,
  message: Pick<OutboxMessage, "userId" | "payload">,
): Promise<RenderedMail> {
  const { subject, html, messageType, headerOverrides } = message.payload as Partial<
    Record<keyof ScheduledEmailPayload, unknown>
  >;
  if (typeof html !== "string" || html.trim() === "") {
    throw new UndeliverableMessage("scheduled e-mail has no html in its payload");
  }
  const type = typeof messageType === "string" ? messageType : "";
  const refusal = await refusalOf(db, message.userId, type);
  if (refusal) throw new UndeliverableMessage(`scheduled e-mail not sent: ${refusal}`);
  // an empty subject says at least what the mail is
  const line = subjectLine(typeof subject === "string" ? subject : "") || subjectLine(type) || "studyflow";
  const headers = mailHeadersOf(headerOverrides);
  return { subject: line, text: "", html, ...(headers ? { headers } : {}) };
}
