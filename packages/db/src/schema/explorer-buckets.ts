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
 * How many responses to each survey of a study arrived, and how many were submitted, in each hour
 * and each day, kept exact by triggers on survey_responses (migrations 0026 and 0029). A
 * submission adds to the row of its connection's slot (the backend's pid modulo 32), so concurrent
 * submissions to one survey seldom wait on each other's counter row; readers sum the slots. A
 * response submitted in the hour it arrives (every online submission) adds to one row for both.
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
    /** Responses that arrived in the bucket. */
    count: bigint("count", { mode: "number" }).notNull().default(0),
    /** Responses submitted in the bucket (by submitted_at, the bucket taken of that). */
    submitted: bigint("submitted", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.surveyKey, t.width, t.bucket, t.slot] })],
);

/**
 * How many of a study's participants with a flag set to a value entered in each ten minutes and
 * each day (every status), kept exact by triggers on participants (migration 0028) in the writing
 * transaction, from the rows whose flags or entry time a statement changed. Each connection adds
 * to its own slot, so that concurrent rule writes for participants who entered on one day seldom
 * wait on one counter row. The data explorer reads a flag filter's total and a deep page's place in
 * entry order from here. Kept for a flag key only
 * while the study's participants hold at most 64 distinct values of it (see
 * participantFlagValues and explorerUnkeptFlagKeys).
 */
export const participantFlagBuckets = pgTable(
  "participant_flag_buckets",
  {
    studyKey: text("study_key").notNull(),
    flagKey: text("flag_key").notNull(),
    flagValue: text("flag_value").notNull(),
    /** The bucket's length in seconds: 600 (ten minutes) or 86400 (a day). */
    width: integer("width").notNull(),
    /** floor(entered_at / width). */
    bucket: bigint("bucket", { mode: "number" }).notNull(),
    /** The writing connection's slot (its backend's pid modulo 32); readers sum the slots. */
    slot: smallint("slot").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.flagKey, t.flagValue, t.width, t.bucket, t.slot] })],
);

/**
 * Every value a study's participants have held for a flag key since its counts are kept: the
 * guard against keys with many values (a date, an id), whose kept counts would cost writers a
 * counter row per participant. A key past 64 values is moved to explorerUnkeptFlagKeys.
 */
export const participantFlagValues = pgTable(
  "participant_flag_values",
  {
    studyKey: text("study_key").notNull(),
    flagKey: text("flag_key").notNull(),
    flagValue: text("flag_value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.flagKey, t.flagValue] })],
);

/**
 * Flag keys whose counts are no longer kept (they took more than 64 values): for good, so that
 * the counts of every other key stay exact. The explorer counts filters on them.
 */
export const explorerUnkeptFlagKeys = pgTable(
  "explorer_unkept_flag_keys",
  {
    studyKey: text("study_key").notNull(),
    flagKey: text("flag_key").notNull(),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.flagKey] })],
);

/**
 * How many of a study's participants have ids starting with each prefix of 3 and of 4 characters,
 * kept exact by triggers on participants (migration 0029) on inserts, deletes and id changes (never
 * on a submit or a flag write). Under a byte-order collation a prefix's ids are neighbours in
 * participant-id order, so the data explorer places a deep page of participants in that order (the
 * API's default) by summing prefixes instead of skipping every id before the page.
 */
export const participantIdBuckets = pgTable(
  "participant_id_buckets",
  {
    studyKey: text("study_key").notNull(),
    /** 3 or 4: the prefix's length in characters (an id shorter than that is its own prefix). */
    prefixLength: smallint("prefix_length").notNull(),
    /** left(participant_id, prefix_length), in byte order (collation "C"). */
    prefix: text("prefix").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.studyKey, t.prefixLength, t.prefix] })],
);
