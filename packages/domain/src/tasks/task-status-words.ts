import type { TaskStatus } from "@studyflow/db";

/**
 * How a task's status reads to people: the CLI prints these words and the console's pages show
 * them (the API serves this table to the console as /console/assets/task-status.js). Only
 * in_progress reads differently from the status it names.
 */
export const TASK_STATUS_WORDS: Readonly<Record<TaskStatus, string>> = {
  queued: "queued",
  in_progress: "running",
  completed: "completed",
  failed: "failed",
  canceled: "canceled",
  skipped: "skipped",
};

/** The word for a status; a status this build does not know reads as itself. */
export function taskStatusWord(status: string): string {
  return Object.hasOwn(TASK_STATUS_WORDS, status) ? TASK_STATUS_WORDS[status as TaskStatus] : status;
}
