import { integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { studies } from "./studies";

/** Every upload is a new version; the highest version of a study is its current rule set. */
export const studyRules = pgTable(
  "study_rules",
  {
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    /** Expression[] in the CASE study-engine JSON form, validated before it is stored. */
    rules: jsonb("rules").$type<unknown[]>().notNull(),
    uploadedBy: text("uploaded_by").notNull(),
    uploadedAt: timestamp("uploaded_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.version] })],
);
