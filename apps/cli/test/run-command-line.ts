import type { DbHandle } from "@studyflow/db";
import { createCapturedOutput, describeFailure, loadConfig, parseCommandLine, type CliContext } from "../src/index";
import type { ProgressStream } from "../src/progress";
import { systemClock } from "@studyflow/domain/foundation";

export interface CommandLineSettings {
  /** Settings of the environment besides the database (TIMER_INTERVAL_SECONDS, RESULT_DIR, …). */
  env?: Record<string, string>;
  /** A stand-in for stderr's progress display. */
  progress?: ProgressStream;
}

/**
 * Runs a command line as the entry does, over a test database: returns stdout, stderr, and the
 * exit code the process would have. Relative file flags resolve against `workingDirectory`.
 */
export async function runCommandLine(
  database: DbHandle & { url: string },
  argv: string[],
  workingDirectory = process.cwd(),
  { env = {}, progress }: CommandLineSettings = {},
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
      workingDirectory,
      clock: systemClock,
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
