import { bigserial, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export type StudyAction = "edit-participant-data" | "run-study-action" | "update-study-props" | "read-rule-failures";

/** Per-study rights of management subjects; studyKey "*" means every study. */
export const permissions = pgTable(
  "permissions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    subjectId: text("subject_id").notNull(),
    studyKey: text("study_key").notNull(),
    action: text("action").$type<StudyAction | "*">().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("permissions_uq").on(t.subjectId, t.studyKey, t.action)],
);
