import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { studies } from "./studies";

/** Response items marked confidential, stored apart under the participant's confidential id. */
export const confidentialResponses = pgTable(
  "confidential_responses",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    confidentialId: text("confidential_id").notNull(),
    key: text("key").notNull(),
    responses: jsonb("responses").$type<unknown[]>().notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [index("confidential_responses_owner_idx").on(t.studyKey, t.confidentialId, t.key)],
);

/** Maps a confidential id back to the profile it was derived from, so messages can reach the user. */
export const confidentialIdMap = pgTable(
  "confidential_id_map",
  {
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    confidentialId: text("confidential_id").notNull(),
    profileId: text("profile_id").notNull(),
  },
  (t) => [index("confidential_id_map_idx").on(t.studyKey, t.confidentialId)],
);
