import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { unixSeconds } from "./columns";
import { studies } from "./studies";

export const surveyResponses = pgTable(
  "survey_responses",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    participantId: text("participant_id").notNull(),
    key: text("key").notNull(),
    versionId: text("version_id").notNull().default(""),
    openedAt: unixSeconds("opened_at").notNull().default(0),
    submittedAt: unixSeconds("submitted_at").notNull().default(0),
    arrivedAt: unixSeconds("arrived_at").notNull(),
    responses: jsonb("responses").$type<unknown[]>().notNull().default([]),
    context: jsonb("context").$type<Record<string, string>>().notNull().default({}),
  },
  (t) => [
    // checkConditionForOldResponses reads a participant's most recent responses first.
    index("survey_responses_participant_idx").on(t.studyKey, t.participantId, t.arrivedAt.desc()),
    index("survey_responses_study_key_idx").on(t.studyKey, t.key),
    // Exports and the data explorer page a study's responses (or one survey's) in submission order,
    // keyset on (submitted_at, id): these serve both directions without a sort.
    index("survey_responses_study_submitted_idx").on(t.studyKey, t.submittedAt, t.id),
    index("survey_responses_study_key_submitted_idx").on(t.studyKey, t.key, t.submittedAt, t.id),
    // A survey's export in arrival order (the default, as CASE's natural order) and a daily export's
    // arrivedAt window.
    index("survey_responses_study_key_arrived_idx").on(t.studyKey, t.key, t.arrivedAt, t.id),
  ],
);
