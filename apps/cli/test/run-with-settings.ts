import type { DbHandle } from "@studyflow/db";
import type { ProgressStream } from "../src/progress";
import { runCommandLine } from "./run-command-line";

/**
 * Runs a command line as run-command-line.ts does, with settings of the environment besides the
 * database (TIMER_INTERVAL_SECONDS, TASK_RETENTION_DAYS, RESULT_DIR, …) and a stand-in for stderr's
 * progress display.
 */
export function runWithSettings(
  database: DbHandle & { url: string },
  argv: string[],
  env: Record<string, string>,
  progress?: ProgressStream,
) {
  return runCommandLine(database, argv, process.cwd(), { env, ...(progress ? { progress } : {}) });
}
