import {
  bigint,
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt } from "./columns";
import { studyKeyColumn } from "./studies";

export const studyCounters = pgTable(
  "study_counters",
  {
    studyKey: studyKeyColumn(),
    scope: text("scope").notNull(),
    value: bigint("value", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.scope] })],
);

export const studyCodeLists = pgTable(
  "study_code_lists",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    studyKey: studyKeyColumn(),
    listKey: text("list_key").notNull(),
    code: text("code").notNull(),
    addedAt: createdAt(),
  },
  (t) => [uniqueIndex("study_code_lists_uq").on(t.studyKey, t.listKey, t.code)],
);

export type StudyVariableType = "string" | "int" | "float" | "boolean" | "date";

export const studyVariables = pgTable(
  "study_variables",
  {
    studyKey: studyKeyColumn(),
    key: text("key").notNull(),
    type: text("type").$type<StudyVariableType>().notNull(),
    /** A JSON string, number or boolean matching `type`; dates are Unix seconds. */
    value: jsonb("value").notNull(),
    valueUpdatedAt: timestamp("value_updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** case-admin's description of the variable (CASE's StudyVariable), shown in its configurator. */
    label: text("label").notNull().default(""),
    description: text("description").notNull().default(""),
    /** How case-admin edits the value (its uiType), and the variable's place in its list. */
    uiType: text("ui_type").notNull().default(""),
    uiPriority: integer("ui_priority").notNull().default(0),
    /** case-admin's per-type settings (bounds, options); opaque here. */
    configs: jsonb("configs"),
    createdAt: createdAt(),
    /** Last change of the description (label … configs), apart from the value. */
    configUpdatedAt: timestamp("config_updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.key] })],
);

/** NOTIFY_RESEARCHER writes here; a notification job delivers them. */
export const researcherMessages = pgTable(
  "researcher_messages",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    studyKey: studyKeyColumn(),
    participantId: text("participant_id").notNull(),
    type: text("type").notNull(),
    payload: jsonb("payload").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    /** When the notification was turned into e-mails to the study's subscribers; null until then. */
    deliveredAt: timestamp("delivered_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("researcher_messages_study_idx").on(t.studyKey, t.createdAt),
    index("researcher_messages_undelivered_idx")
      .on(t.id)
      .where(sql`${t.deliveredAt} is null`),
  ],
);
