import { bigint, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

/**
 * Participants per study and status, kept exact by statement-level triggers on `participants`
 * (migration 0002), so a task's target count is one indexed read instead of a scan of a
 * million-row study.
 */
export const studyParticipantCounts = pgTable(
  "study_participant_counts",
  {
    studyKey: text("study_key").notNull(),
    studyStatus: text("study_status").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.studyStatus] })],
);
