import { bigserial, index, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { studyKeyColumn } from "./studies";

/**
 * Survey definitions as the CASE editor tools produce them (opaque JSON to studyflow apart from
 * the survey key and the version id). Every upload is a new version; the newest published one is
 * the survey's current version. Unpublishing a survey stamps `unpublishedAt` on its versions.
 */
export const surveyVersions = pgTable(
  "survey_versions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    studyKey: studyKeyColumn(),
    surveyKey: text("survey_key").notNull(),
    /** Server-assigned, unique per survey; responses name it in `versionId`. */
    versionId: text("version_id").notNull(),
    definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
    publishedAt: timestamp("published_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    publishedBy: text("published_by").notNull(),
    unpublishedAt: timestamp("unpublished_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    uniqueIndex("survey_versions_uq").on(t.studyKey, t.surveyKey, t.versionId),
    index("survey_versions_current_idx").on(t.studyKey, t.surveyKey, t.publishedAt),
  ],
);
