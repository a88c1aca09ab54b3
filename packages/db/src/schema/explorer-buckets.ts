import { bigint, integer, pgTable, primaryKey, smallint, text } from "drizzle-orm/pg-core";

/**
 * How many of a study's participants entered in each ten minutes and each day, per status, kept
 * exact by the participant count triggers (migration 0026) in the transaction of every insert,
 * delete and status or entry-time change. The data explorer reads its totals and the position of a
 * deep page in entry-time order from here: the rows before the page's ten minutes are summed
 * instead of counted, and only those ten minutes are skipped through on the index.
 */
export const participantEntryBuckets = pgTable(
  "participant_entry_buckets",
  {
    studyKey: text("study_key").notNull(),
    /** The bucket's length in seconds: 600 (ten minutes) or 86400 (a day). */
    width: integer("width").notNull(),
    /** floor(entered_at / width). */
    bucket: bigint("bucket", { mode: "number" }).notNull(),
    studyStatus: text("study_status").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.width, t.bucket, t.studyStatus] })],
);

/**
 * How many responses to each survey of a study arrived in each hour and each day, kept exact by
 * triggers on survey_responses (migration 0026). A submission adds to the row of its connection's
 * slot (the backend's pid modulo 32), so concurrent submissions to one survey seldom wait on each
 * other's counter row; readers sum the slots.
 */
export const responseArrivalBuckets = pgTable(
  "response_arrival_buckets",
  {
    studyKey: text("study_key").notNull(),
    surveyKey: text("survey_key").notNull(),
    /** The bucket's length in seconds: 3600 (an hour) or 86400 (a day). */
    width: integer("width").notNull(),
    /** floor(arrived_at / width). */
    bucket: bigint("bucket", { mode: "number" }).notNull(),
    slot: smallint("slot").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.surveyKey, t.width, t.bucket, t.slot] })],
);
