import {
  bigint,
  bigserial,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { participants } from "./participants";
import { studyKeyColumn } from "./studies";

/**
 * Per study, message type and language: the e-mail a participant message becomes (scheduled
 * ADD_MESSAGE messages when due, SEND_MESSAGE_NOW at once). Subject and body are templates over
 * the participant message's payload.
 */
export const messageTemplates = pgTable(
  "message_templates",
  {
    studyKey: studyKeyColumn(),
    messageType: text("message_type").notNull(),
    /** A language code (en, de-CH); the study's default language is used when the participant's is missing. */
    language: text("language").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.messageType, t.language] })],
);

/**
 * The indexed home of scheduled participant messages' due times: one row per message in a
 * participant's `messages`, written in the same transaction as the participant's state, so the
 * sender finds due messages by index instead of scanning every participant's JSON. Rows go
 * with their participant (a deleted or merged-away participant takes its messages along).
 */
export const participantMessageSchedule = pgTable(
  "participant_message_schedule",
  {
    studyKey: studyKeyColumn(),
    participantId: text("participant_id").notNull(),
    messageId: text("message_id").notNull(),
    messageType: text("message_type").notNull(),
    /** Unix seconds: the message's scheduledFor. */
    dueAt: bigint("due_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.studyKey, t.participantId, t.messageId] }),
    index("participant_message_schedule_due_idx").on(t.dueAt),
    foreignKey({
      name: "participant_message_schedule_participant_fk",
      columns: [t.studyKey, t.participantId],
      foreignColumns: [participants.studyKey, participants.participantId],
    }).onDelete("cascade"),
  ],
);

/**
 * Researchers who receive a study's NOTIFY_RESEARCHER messages of a type ("*": every type) by
 * e-mail.
 */
export const researcherSubscriptions = pgTable(
  "researcher_subscriptions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    studyKey: studyKeyColumn(),
    messageType: text("message_type").notNull(),
    email: text("email").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("researcher_subscriptions_uq").on(t.studyKey, t.messageType, t.email)],
);
