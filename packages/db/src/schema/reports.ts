import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { unixSeconds } from "./columns";
import { studies } from "./studies";

export interface StoredReportData {
  key: string;
  value: string;
  dtype?: string;
}

export const reports = pgTable(
  "reports",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    participantId: text("participant_id").notNull(),
    key: text("key").notNull(),
    /** The survey response that produced the report, when the event was a SUBMIT. */
    responseId: uuid("response_id"),
    /** The event that produced the report: ENTER, SUBMIT, LEAVE, MERGE, CUSTOM, TIMER. */
    eventType: text("event_type").notNull(),
    timestamp: unixSeconds("timestamp").notNull(),
    data: jsonb("data").$type<StoredReportData[]>().notNull().default([]),
  },
  (t) => [
    index("reports_participant_idx").on(t.studyKey, t.participantId),
    // Exports and the data explorer page a study's reports (or one key's) by (timestamp, id).
    index("reports_study_timestamp_idx").on(t.studyKey, t.timestamp, t.id),
    index("reports_study_key_timestamp_idx").on(t.studyKey, t.key, t.timestamp, t.id),
  ],
);
