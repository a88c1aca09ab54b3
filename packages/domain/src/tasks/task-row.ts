import type { tasks } from "@studyflow/db";

/** A bulk task as stored: its kind, input, status and progress. */
export type TaskRow = typeof tasks.$inferSelect;
