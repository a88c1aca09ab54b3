import { bigserial, index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Who changed what and when, for every management change to a study's configuration (properties,
 * status, surveys, code lists, variables, rules) and to service keys. No foreign key: the trail
 * outlives what it describes.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    /** The study the change belongs to; null for changes outside any study (service keys). */
    studyKey: text("study_key"),
    /** Management subject (a person's token subject or a service account). */
    actor: text("actor").notNull(),
    /** What was done, e.g. "study.props.update", "survey.publish", "code-list.add". */
    action: text("action").notNull(),
    /** What it was done to, e.g. a survey key, a code list key, a variable key. */
    target: text("target"),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("audit_log_study_idx").on(t.studyKey, t.at)],
);
