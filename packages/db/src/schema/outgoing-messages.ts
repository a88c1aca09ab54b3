import { index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

/**
 * pending → sending (claimed by a worker) → sent | failed; a failed attempt goes back to pending
 * until the attempts run out. A `sending` row is never retried automatically (at most once). A
 * pending message past its `expiresAt` becomes `expired` instead of being sent late.
 */
export type OutgoingMessageStatus = "pending" | "sending" | "sent" | "failed" | "expired";

/**
 * Transactional outbox: rows are written in the transaction that decided to send, and
 * delivered afterwards by the worker, so a rolled-back request never sends anything.
 */
export const outgoingMessages = pgTable(
  "outgoing_messages",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Template name, e.g. password-reset, password-changed, or a study message type. */
    template: text("template").notNull(),
    toAddress: text("to_address"),
    userId: uuid("user_id"),
    studyKey: text("study_key"),
    /** Confidential id of the participant, for study messages resolved at delivery time. */
    confidentialId: text("confidential_id"),
    language: text("language"),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default({}),
    status: text("status").$type<OutgoingMessageStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    availableAt: timestamp("available_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    sentAt: timestamp("sent_at", { withTimezone: true, mode: "date" }),
    /** After this a message is no longer worth sending (a study's "now" message a day late); null = never. */
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [
    index("outgoing_messages_pending_idx").on(t.status, t.availableAt),
    // a study's messages, newest first, for researchers (GET /v1/studies/{studyKey}/messages)
    index("outgoing_messages_study_idx").on(t.studyKey, t.createdAt),
    // an account's mails: the resend limit, the lifecycle rounds, the account's deletion
    index("outgoing_messages_user_idx").on(t.userId),
  ],
);
