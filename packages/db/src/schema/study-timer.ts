import { boolean, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { studyKeyColumn } from "./studies";

/**
 * A study's timer schedule, when it differs from the global default (TIMER_INTERVAL_SECONDS):
 * a tick every `intervalSeconds`, shifted by `offsetSeconds` from the epoch's grid. A paused
 * timer gets no ticks until it is resumed. No row: the default interval, not paused.
 */
export const studyTimers = pgTable("study_timers", {
  studyKey: studyKeyColumn().primaryKey(),
  intervalSeconds: integer("interval_seconds"),
  offsetSeconds: integer("offset_seconds").notNull().default(0),
  paused: boolean("paused").notNull().default(false),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
