import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { unixSeconds } from "./columns";
import { PARTICIPANT_FIELD_COLUMNS as field } from "./participant-fields";
import { studies } from "./studies";

export interface StoredAssignedSurvey {
  surveyKey: string;
  validFrom: number;
  validUntil: number;
  category: string;
  studyKey?: string;
  profileID?: string;
}

export interface StoredParticipantMessage {
  id: string;
  type: string;
  scheduledFor: number;
}

/**
 * Statuses a bulk run (run-actions, a timer tick) never evaluates: deleted accounts and anonymous
 * pre-registrations, as participant events skip them. Plain words: they are spelled into the SQL of
 * the index below and of the bulk run's reads, which must match it for the planner to use it.
 */
export const STATUSES_EXCLUDED_FROM_BULK = ["accountDeleted", "temporary"] as const;

/** `study_status not in (…)` for STATUSES_EXCLUDED_FROM_BULK, as literal SQL. */
export const ELIGIBLE_FOR_BULK_SQL = `study_status not in (${STATUSES_EXCLUDED_FROM_BULK.map((status) => `'${status}'`).join(", ")})`;

export const participants = pgTable(
  "participants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    participantId: text(field.participantId.column).notNull(),
    currentStudySession: text(field.currentStudySession.column).notNull().default(""),
    enteredAt: unixSeconds(field.enteredAt.column).notNull(),
    modifiedAt: unixSeconds(field.modifiedAt.column).notNull(),
    studyStatus: text(field.studyStatus.column).notNull(),
    flags: jsonb(field.flags.column).$type<Record<string, string>>().notNull().default({}),
    linkingCodes: jsonb(field.linkingCodes.column).$type<Record<string, string>>().notNull().default({}),
    assignedSurveys: jsonb(field.assignedSurveys.column).$type<StoredAssignedSurvey[]>().notNull().default([]),
    lastSubmissions: jsonb(field.lastSubmissions.column).$type<Record<string, number>>().notNull().default({}),
    messages: jsonb(field.messages.column).$type<StoredParticipantMessage[]>().notNull().default([]),
    /** HMAC of the account id, only when the study tracks accounts. */
    hashedAccountId: text("hashed_account_id"),
    isMainProfile: boolean("is_main_profile"),
    /** Optimistic-concurrency counter: every write bumps it and is guarded by the value it read. */
    version: integer("version").notNull().default(1),
  },
  (t) => [
    // Serves lookups by participant id and keyset paging of a study in participant-id order.
    uniqueIndex("participants_study_participant_uq").on(t.studyKey, t.participantId),
    index("participants_study_status_idx").on(t.studyKey, t.studyStatus),
    index("participants_temporary_entered_idx")
      .on(t.studyKey, t.enteredAt)
      .where(sql`${t.studyStatus} = 'temporary'`),
    // The participants a bulk run evaluates, in key order and nothing else: a run that reads only
    // the rows its rules can change counts the ones it passed over from this index alone, and the
    // planner splits a study into chunks by walking it. On a million participants: chunk planning
    // 1.3–1.8 s → 0.12 s, counting a 25,000-participant chunk 12.6 → 5.6 ms. A participant's insert
    // adds one entry (single-row inserts measured 470–510 µs with and without it); rule writes to
    // the JSON columns stay HOT, and a status change already rewrites the status index.
    index("participants_bulk_eligible_idx").on(t.studyKey, t.participantId).where(sql.raw(ELIGIBLE_FOR_BULK_SQL)),
    // The data explorer's participants in entry order (case-admin's default sort), with the status
    // to filter on from the index alone; entered_at and the status change seldom, so rule writes
    // stay HOT.
    index("participants_study_entered_idx").on(t.studyKey, t.enteredAt, t.participantId, t.studyStatus),
    // A participant found by a linking code (case-admin's filter, `linkingCodes.<key>` equal to a
    // value, is also written as containment). Linking codes are set seldom, so their writes
    // losing HOT costs little; flags, which rules write all the time, have no such index.
    index("participants_linking_codes_idx").using("gin", t.linkingCodes.op("jsonb_path_ops")),
  ],
);
