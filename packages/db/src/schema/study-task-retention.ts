import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { studyKeyColumn } from "./studies";

/**
 * A study's own retention of finished tasks, where it differs from the defaults
 * (TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS): a null column takes the default, 0 keeps
 * finished tasks of that kind forever. No row: both defaults.
 */
export const studyTaskRetention = pgTable("study_task_retention", {
  studyKey: studyKeyColumn().primaryKey(),
  /** Days finished run-actions and export tasks are kept. */
  days: integer("days"),
  /** Days finished timer ticks are kept. */
  timerDays: integer("timer_days"),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
