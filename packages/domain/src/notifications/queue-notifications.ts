import { asc, inArray, isNull } from "drizzle-orm";
import {
  outgoingMessages,
  researcherMessages,
  researcherSubscriptions,
  type Database,
  type Transaction,
} from "@studyflow/db";
import { RESEARCHER_NOTIFICATION_TEMPLATE, type ResearcherNotificationPayload } from "./notification-mail";
import { ANY_MESSAGE_TYPE } from "./subscriptions";

/**
 * Notifications taken per transaction. The transaction locks them and writes one outbox row per
 * subscriber each (a study has a handful of subscribers), so it stays a few milliseconds long;
 * a bulk task that notifies for thousands of participants is still worked off in a few calls.
 */
export const NOTIFICATION_BATCH_SIZE = 100;
/**
 * Batches one call takes at most. The outbox round calls this before it sends, so a backlog of
 * notifications delays that round's mails by at most ten short transactions; the rest follows in
 * the next rounds.
 */
export const MAX_NOTIFICATION_BATCHES_PER_CALL = 10;
/** Outbox rows per INSERT: five parameters each, far below the 65,535 PostgreSQL takes per statement. */
const OUTBOX_ROWS_PER_INSERT = 1_000;

export interface QueuedNotifications {
  /**
   * Researcher messages marked delivered in this call: turned into outbox e-mails (one per
   * subscriber), or, without a subscriber, closed with nobody to tell.
   */
  delivered: number;
  /** Outbox e-mails queued for them. */
  mails: number;
}

export interface QueueNotificationsOptions {
  /** @defaultValue {@link NOTIFICATION_BATCH_SIZE} */
  batchSize?: number;
  /** @defaultValue {@link MAX_NOTIFICATION_BATCHES_PER_CALL} */
  maxBatches?: number;
}

interface Subscriber {
  studyKey: string;
  messageType: string;
  email: string;
}

/**
 * The addresses a notification goes to, each once, with the subscription that brings it there:
 * its own type rather than "*" for an address subscribed both ways.
 */
function recipientsOf(
  message: { studyKey: string; type: string },
  subscribers: readonly Subscriber[],
): Map<string, string> {
  const recipients = new Map<string, string>();
  for (const wanted of [message.type, ANY_MESSAGE_TYPE]) {
    for (const subscriber of subscribers) {
      if (subscriber.studyKey !== message.studyKey || subscriber.messageType !== wanted) continue;
      if (!recipients.has(subscriber.email)) recipients.set(subscriber.email, wanted);
    }
  }
  return recipients;
}

/** One batch in one transaction: lock undelivered notifications, queue their e-mails, mark them delivered. */
async function queueBatch(tx: Transaction, now: Date, batchSize: number): Promise<QueuedNotifications> {
  // SKIP LOCKED: concurrent callers (two workers' outbox rounds) take disjoint notifications. A
  // notification another caller delivered meanwhile fails the re-checked `delivered_at is null`
  // once that caller commits, so none is queued twice.
  const messages = await tx
    .select()
    .from(researcherMessages)
    .where(isNull(researcherMessages.deliveredAt))
    .orderBy(asc(researcherMessages.id))
    .limit(batchSize)
    .for("update", { skipLocked: true });
  if (messages.length === 0) return { delivered: 0, mails: 0 };

  const studyKeys = [...new Set(messages.map((message) => message.studyKey))];
  const subscribers = await tx
    .select({
      studyKey: researcherSubscriptions.studyKey,
      messageType: researcherSubscriptions.messageType,
      email: researcherSubscriptions.email,
    })
    .from(researcherSubscriptions)
    .where(inArray(researcherSubscriptions.studyKey, studyKeys))
    .orderBy(asc(researcherSubscriptions.id));

  const mails: (typeof outgoingMessages.$inferInsert)[] = [];
  for (const message of messages) {
    for (const [email, subscribedTo] of recipientsOf(message, subscribers)) {
      const payload: ResearcherNotificationPayload = {
        notificationId: String(message.id),
        studyKey: message.studyKey,
        messageType: message.type,
        participantId: message.participantId,
        raisedAt: message.createdAt.toISOString(),
        subscribedTo,
        values: message.payload,
      };
      // The study, but no confidential id: the row is no participant's message, and its
      // address is its own. No expiry: unlike a participant's "now" message, a notification
      // that arrives late still tells the researcher what happened.
      mails.push({
        template: RESEARCHER_NOTIFICATION_TEMPLATE,
        toAddress: email,
        studyKey: message.studyKey,
        payload,
        availableAt: now,
      });
    }
  }
  for (let start = 0; start < mails.length; start += OUTBOX_ROWS_PER_INSERT) {
    await tx.insert(outgoingMessages).values(mails.slice(start, start + OUTBOX_ROWS_PER_INSERT));
  }
  await tx
    .update(researcherMessages)
    .set({ deliveredAt: now })
    .where(
      inArray(
        researcherMessages.id,
        messages.map((message) => message.id),
      ),
    );
  return { delivered: messages.length, mails: mails.length };
}

/**
 * Turns undelivered NOTIFY_RESEARCHER messages into outbox e-mails to the study's subscribers:
 * one per address subscribed to the message's type or to "*". Each batch of notifications is
 * queued and marked delivered in one transaction, so each reaches the outbox at most once, also
 * with several callers at a time. A notification without subscribers is marked delivered too:
 * there is nobody to tell, and a later subscriber gets the notifications from then on, not a
 * backlog. Called by the outbox round before it sends.
 */
export async function queueResearcherNotifications(
  db: Database,
  nowMs: number,
  options: QueueNotificationsOptions = {},
): Promise<QueuedNotifications> {
  const batchSize = options.batchSize ?? NOTIFICATION_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? MAX_NOTIFICATION_BATCHES_PER_CALL;
  const now = new Date(nowMs);
  const total: QueuedNotifications = { delivered: 0, mails: 0 };
  for (let batch = 0; batch < maxBatches; batch++) {
    const queued = await db.transaction((tx) => queueBatch(tx, now, batchSize));
    total.delivered += queued.delivered;
    total.mails += queued.mails;
    if (queued.delivered < batchSize) break;
  }
  return total;
}
