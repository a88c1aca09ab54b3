import type { DbHandle } from "@studyflow/db";
import { createCapturedOutput, describeFailure, loadConfig, parseCommandLine, type CliContext } from "../src/index";
import type { ProgressStream } from "../src/progress";

/**
 * Runs a command line as run-command-line.ts does, with settings of the environment besides the
 * database (TIMER_INTERVAL_SECONDS, TASK_RETENTION_DAYS, RESULT_DIR, …) and a stand-in for stderr's
 * progress display.
 */
export async function runWithSettings(
  database: DbHandle & { url: string },
  argv: string[],
  env: Record<string, string>,
  progress?: ProgressStream,
) {
  const config = loadConfig({ NODE_ENV: "test", DATABASE_URL: database.url, ...env });
  const { output, captured } = createCapturedOutput(argv.includes("--json"));
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind !== "run") throw new Error("help");
    const ctx: CliContext & { progress?: ProgressStream } = {
      database,
      config,
      output,
      workingDirectory: process.cwd(),
      ...(progress ? { progress } : {}),
    };
    await commandLine.run(ctx);
    return { ...captured, exitCode: 0 };
  } catch (error) {
    const failure = describeFailure(error);
    output.error(failure.message);
    return { ...captured, exitCode: failure.exitCode };
  }
}
