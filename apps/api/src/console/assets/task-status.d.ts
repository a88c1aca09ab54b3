// The console's task-status module is not a file in this folder: the API writes it from
// @studyflow/domain's tables when it starts (../task-status-module.ts), so the console and the CLI
// share one vocabulary. These are its types, for the folder's type check.

/** Statuses a task never leaves. */
export const TERMINAL_STATUSES: ReadonlySet<string>;

/** The word for a status; a status this build does not know reads as itself. */
export function taskStatusWord(status: string): string;
