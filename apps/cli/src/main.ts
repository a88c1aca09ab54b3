import { demoModeWarning } from "@studyflow/config";
import { createDb, type DbHandle } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import { loadConfig, processEnv } from "./config";
import { describeFailure } from "./failures";
import { createOutput, processStreams } from "./output";
import { parseCommandLine } from "./program";

/**
 * Entry of the operator CLI (`npm run cli -- <command> [flags]`, and `npm run demo` / `demo:seed`).
 * The only place of the CLI that receives the environment; exit codes: 0 done, 1 usage or
 * validation error, 2 anything else.
 */
async function main(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  // Until the command line is parsed, a plain look for --json decides how a usage error is shown.
  let output = createOutput(argv.includes("--json"));
  let database: DbHandle | undefined;
  try {
    // Parsed before the configuration is loaded, so help and typos need no working environment.
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind === "help") {
      output.text(commandLine.text);
      return 0;
    }
    output = createOutput(commandLine.json);
    // npm runs scripts from the package root; INIT_CWD is where the operator typed the command.
    const workingDirectory = env.INIT_CWD ?? process.cwd();
    if (commandLine.uses === "nothing") {
      await commandLine.run({ output, workingDirectory });
      return 0;
    }
    const config = loadConfig(env);
    setCaseStudyGlobalSecret(config.CASE_STUDY_GLOBAL_SECRET);
    const demoWarning = demoModeWarning(config);
    // On stderr, so that a --json result on stdout stays one object.
    if (demoWarning !== undefined) processStreams.stderr(`warning: ${demoWarning}\n`);
    // Commands run their statements one after another: one connection is all they use.
    database = createDb(config.DATABASE_URL, { max: 1, applicationName: "studyflow-cli" });
    await commandLine.run({ database, config, output, workingDirectory, clock: systemClock });
    return 0;
  } catch (error) {
    const failure = describeFailure(error);
    output.error(failure.message);
    return failure.exitCode;
  } finally {
    // A failing close must not replace the command's own outcome.
    await database?.close().catch(() => undefined);
  }
}

process.exitCode = await main(process.argv.slice(2), processEnv());
