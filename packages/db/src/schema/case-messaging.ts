import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";
import { studies } from "./studies";

/** case-backend's header overrides of an e-mail template. */
export interface EmailHeaderOverrides {
  from?: string;
  sender?: string;
  replyTo?: string[];
  noReplyTo?: boolean;
}

/** One language of an e-mail template; `templateDef` is base64 of a Go html/template, as case-admin sends it. */
export interface EmailTemplateTranslation {
  lang: string;
  subject: string;
  templateDef: string;
}

/** One language of an SMS template (base64 of a Go text template). */
export interface SmsTemplateTranslation {
  lang: string;
  templateDef: string;
}

/**
 * case-backend's e-mail templates, kept as case-admin edits them: global ones (study_key null:
 * registration, password reset, newsletters…) and per-study ones. One per message type and study.
 */
export const emailTemplates = pgTable(
  "email_templates",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key").references(() => studies.key, { onDelete: "cascade" }),
    messageType: text("message_type").notNull(),
    defaultLanguage: text("default_language").notNull().default(""),
    headerOverrides: jsonb("header_overrides").$type<EmailHeaderOverrides>(),
    translations: jsonb("translations").$type<EmailTemplateTranslation[]>().notNull().default([]),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  // one global template per type too: null study keys count as equal
  (t) => [unique("email_templates_type_study_uq").on(t.messageType, t.studyKey).nullsNotDistinct()],
);

/** case-backend's SMS templates: stored for case-admin (studyflow sends no SMS). One per message type. */
export const smsTemplates = pgTable("sms_templates", {
  id: uuid("id").primaryKey().defaultRandom(),
  messageType: text("message_type").notNull().unique("sms_templates_message_type_uq"),
  defaultLanguage: text("default_language").notNull().default(""),
  fromName: text("from_name").notNull().default(""),
  translations: jsonb("translations").$type<SmsTemplateTranslation[]>().notNull().default([]),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/** Who a scheduled e-mail goes to: every subscribed account, or the accounts of a study's participants. */
export const SCHEDULED_EMAIL_TYPES = ["all-users", "study-participants"] as const;
export type ScheduledEmailType = (typeof SCHEDULED_EMAIL_TYPES)[number];

/** The template a scheduled e-mail sends: CASE's EmailTemplate without id. */
export interface ScheduledEmailTemplate {
  messageType: string;
  defaultLanguage: string;
  headerOverrides?: EmailHeaderOverrides | null;
  translations: EmailTemplateTranslation[];
}

/**
 * case-backend's scheduled e-mails: sent at `next_time` (Unix seconds), then every `period`
 * seconds until `until` (0: no end), by one cluster-wide job.
 */
export const scheduledEmails = pgTable(
  "scheduled_emails",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    type: text("type").$type<ScheduledEmailType>().notNull(),
    /** The study of a `study-participants` schedule; null for `all-users`. */
    studyKey: text("study_key").references(() => studies.key, { onDelete: "cascade" }),
    label: text("label").notNull().default(""),
    template: jsonb("template").$type<ScheduledEmailTemplate>().notNull(),
    /** An engine expression a participant must satisfy (study-participants only); null: everyone. */
    condition: jsonb("condition"),
    nextTime: bigint("next_time", { mode: "number" }).notNull(),
    period: bigint("period", { mode: "number" }).notNull().default(0),
    until: bigint("until", { mode: "number" }).notNull().default(0),
    createdBy: text("created_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    index("scheduled_emails_next_time_idx").on(t.nextTime),
    index("scheduled_emails_study_idx")
      .on(t.studyKey)
      .where(sql`${t.studyKey} is not null`),
  ],
);
