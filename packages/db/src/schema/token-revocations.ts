import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Management tokens of a subject issued before `revokedBefore` are refused: the way to end a
 * researcher's sessions (a lost laptop, a person leaving the team) before their tokens expire.
 */
export const tokenRevocations = pgTable("token_revocations", {
  subjectId: text("subject_id").primaryKey(),
  revokedBefore: timestamp("revoked_before", { withTimezone: true, mode: "date" }).notNull(),
});
