import { TASK_STATUS_WORDS, TERMINAL_STATUSES } from "@studyflow/domain/tasks";

/** The console's asset name of the module below; its types are assets/task-status.d.ts. */
export const TASK_STATUS_MODULE = "task-status.js";

/**
 * The console's task-status module, written from the domain's tables when the API starts, so the
 * console's pages and the CLI (which imports the same tables) say a task's status in the same words
 * and agree on which statuses are final. Only data is interpolated, as JSON.
 */
export function taskStatusModuleSource(): string {
  return `// @ts-check
// Written by the API from @studyflow/domain's task-status tables (apps/api/src/console/task-status-module.ts).

/** @type {Readonly<Record<string, string>>} */
const WORDS = Object.freeze(${JSON.stringify(TASK_STATUS_WORDS)});

/** Statuses a task never leaves. */
export const TERMINAL_STATUSES = new Set(${JSON.stringify(TERMINAL_STATUSES)});

/**
 * The word for a status; a status this build does not know reads as itself.
 * @param {string} status
 */
export function taskStatusWord(status) {
  return Object.hasOwn(WORDS, status) ? WORDS[status] : status;
}
`;
}
