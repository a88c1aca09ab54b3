import { Command, CommanderError, Option } from "commander";
import { z } from "zod";
import type { BoundCommand, CliCommand } from "./command-definition";
import { demoSeedCommand } from "./commands/demo-seed";
import { demoWalkthroughCommand } from "./commands/demo-walkthrough";
import { dailyExportSetCommand, dailyExportShowCommand } from "./commands/daily-export-set";
import { EXPORT_COMMANDS } from "./commands/export-commands";
import { importCaseCommand } from "./commands/import-case";
import { MANAGEMENT_USER_COMMANDS } from "./commands/management-user-commands";
import { migrateCommand } from "./commands/migrate";
import { PARTICIPANT_FILES_COMMANDS } from "./commands/participant-files-commands";
import { participantsAddCommand } from "./commands/participants-add";
import { participantsListCommand } from "./commands/participants-list";
import { participantsShowCommand } from "./commands/participants-show";
import { passwordResetTokenCommand } from "./commands/password-reset-token";
import { permissionGrantCommand } from "./commands/permission-grant";
import { ruleFailuresListCommand } from "./commands/rule-failures-list";
import { MESSAGE_TEMPLATE_COMMANDS } from "./commands/message-template-commands";
import { SERVICE_ACCOUNT_COMMANDS } from "./commands/service-account-commands";
import { SERVICE_KEY_COMMANDS } from "./commands/service-key-commands";
import { STUDY_CONFIG_COMMANDS } from "./commands/study-config-commands";
import { SUBSCRIPTION_COMMANDS } from "./commands/subscription-commands";
import { SURVEY_COMMANDS } from "./commands/survey-commands";
import { TIMER_COMMANDS } from "./commands/timer-commands";
import { TASK_RETENTION_COMMANDS } from "./commands/task-retention-commands";
import { accountsLifecycleCommand } from "./commands/accounts-lifecycle";
import { studyConfigureCommand } from "./commands/study-configure";
import { studyCreateCommand } from "./commands/study-create";
import { studySetRulesCommand } from "./commands/study-set-rules";
import { tokenManagementCommand } from "./commands/token-management";
import { tokenParticipantCommand } from "./commands/token-participant";
import { tokenRevokeCommand } from "./commands/token-revoke";
import { USER_ACCOUNT_COMMANDS } from "./commands/user-account-commands";
import { userCreateCommand } from "./commands/user-create";
import { userDeleteCommand } from "./commands/user-delete";
import { UsageError } from "./failures";

/** Every command, in the order the usage lists them. */
export const COMMANDS: readonly CliCommand[] = [
  migrateCommand,
  studyCreateCommand,
  studySetRulesCommand,
  studyConfigureCommand,
  ...STUDY_CONFIG_COMMANDS,
  ...SURVEY_COMMANDS,
  ...TIMER_COMMANDS,
  ...TASK_RETENTION_COMMANDS,
  accountsLifecycleCommand,
  ...MESSAGE_TEMPLATE_COMMANDS,
  ...SUBSCRIPTION_COMMANDS,
  participantsAddCommand,
  participantsListCommand,
  participantsShowCommand,
  ...PARTICIPANT_FILES_COMMANDS,
  userCreateCommand,
  ...USER_ACCOUNT_COMMANDS,
  userDeleteCommand,
  ...MANAGEMENT_USER_COMMANDS,
  ...SERVICE_ACCOUNT_COMMANDS,
  permissionGrantCommand,
  tokenManagementCommand,
  tokenRevokeCommand,
  tokenParticipantCommand,
  ...SERVICE_KEY_COMMANDS,
  passwordResetTokenCommand,
  ruleFailuresListCommand,
  ...EXPORT_COMMANDS,
  dailyExportSetCommand,
  dailyExportShowCommand,
  importCaseCommand,
  demoSeedCommand,
  demoWalkthroughCommand,
];

export type CommandLine =
  { kind: "help"; text: string } | ({ kind: "run"; command: string; json: boolean } & BoundCommand);

const HELP_COMMAND = "help";
const HELP_FLAGS = new Set(["--help", "-h"]);

const USAGE_HEADER = [
  "studyflow operator CLI",
  "",
  "usage: npm run cli -- <command> [flags]",
  "",
  "Configuration comes from the environment, as for the API (DATABASE_URL, MANAGEMENT_JWT_SECRET,",
  "PARTICIPANT_JWT_SECRET, RESET_TOKEN_TTL_SECONDS, RESET_PASSWORD_URL; the export commands also REDIS_URL",
  "and QUEUE_PREFIX, to queue their task for the workers).",
  "Exit codes: 0 done, 1 usage or validation error, 2 any other failure (e.g. database unreachable).",
  "",
  "commands:",
];

/** `--key KEY` for a value flag declared as `--key <KEY>`, `--admin` for a switch. */
function flagTerm(option: Option): string {
  const value = /<(.+)>/.exec(option.flags)?.[1];
  return value === undefined ? option.flags : `${option.long ?? option.flags} ${value}`;
}

function commandUsage(command: Command): string[] {
  const flags = command.options.map((option) => ({ option, term: flagTerm(option) }));
  const synopsis = [command.name(), ...flags.map(({ option, term }) => (option.mandatory ? term : `[${term}]`))];
  const width = Math.max(0, ...flags.map(({ term }) => term.length));
  return [
    `  ${synopsis.join(" ")}`,
    `      ${command.description()}`,
    ...flags.map(({ option, term }) => `      ${term.padEnd(width)}  ${option.description}`),
    "",
  ];
}

/** The usage of every command (for the program), or of one, read from the commander definitions. */
function usageText(command: Command): string {
  const listed = command.parent ? [command] : command.commands.filter((entry) => entry.name() !== HELP_COMMAND);
  const lines = [
    ...USAGE_HEADER,
    ...listed.flatMap(commandUsage),
    "  help [COMMAND]",
    "      this text, or one command's",
  ];
  return `${lines.join("\n")}\n`;
}

function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command "${name}" (run "help" for the list)`);
}

function findCommand(program: Command, name: string): Command {
  const command = program.commands.find((entry) => entry.name() === name && name !== HELP_COMMAND);
  if (!command) throw unknownCommand(name);
  return command;
}

/**
 * What commander left over after taking the flags it knows: with unknown options allowed, those
 * and stray arguments end up in `args`, so the message can say which it is, in the order typed.
 */
function leftoverProblem(command: Command, argv: readonly string[]): string | undefined {
  const [first] = command.args;
  if (first !== undefined) {
    if (first.length < 2 || !first.startsWith("-")) return `unexpected argument "${first}"`;
    const flag = first.split("=", 1)[0] ?? first;
    // A known flag lands here only as a switch given a value ("--admin=yes").
    if (command.options.some((option) => option.long === flag)) return `flag ${flag} takes no value`;
    return `unknown flag ${flag} (see: help ${command.name()})`;
  }
  // Commander gives "--key --json" the value "--json"; a value may start with a dash only inline ("--key=-x").
  for (const option of command.options) {
    const value: unknown = command.getOptionValue(option.attributeName());
    if (typeof value === "string" && value.startsWith("-") && !argv.includes(`${option.long}=${value}`)) {
      return `flag ${option.long} needs a value`;
    }
  }
  return undefined;
}

/** All missing flags at once: commander stops at the first. */
function missingFlags(command: Command): string {
  const missing = command.options
    .filter((option) => option.mandatory && command.getOptionValue(option.attributeName()) === undefined)
    .map((option) => option.long ?? option.flags);
  return `missing required flag${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`;
}

/** A value the command's zod schema refused, named by its flag. */
function valueProblem(command: Command, error: z.ZodError): string {
  const [issue] = error.issues;
  if (!issue) return error.message;
  const attribute = issue.path[0];
  const flag = command.options.find((option) => option.attributeName() === attribute)?.long ?? `--${String(attribute)}`;
  return issue.code === "invalid_type" ? `missing required flag ${flag}` : `${flag} ${issue.message}`;
}

/** Commander's own errors, in the CLI's words. */
function commanderProblem(error: CommanderError, command: Command | undefined, argv: readonly string[]): UsageError {
  const prefix = command ? `${command.name()}: ` : "";
  if (error.code === "commander.optionMissingArgument") {
    // Only the last argument can lack its value.
    const last = argv.at(-1) ?? "";
    const flag = command?.options.find((option) => option.long === last || option.short === last)?.long ?? last;
    return new UsageError(`${prefix}flag ${flag} needs a value`);
  }
  if (error.code === "commander.missingMandatoryOptionValue" && command) {
    // Checked by commander before anything else; a mistyped flag is the likelier cause, so it comes first.
    return new UsageError(`${prefix}${leftoverProblem(command, argv) ?? missingFlags(command)}`);
  }
  return new UsageError(`${prefix}${error.message.replace(/^error: /, "")}`);
}

interface ParseState {
  line?: CommandLine;
  /** What commander printed for `<command> --help`. */
  helpText: string;
  /** The command commander handed the arguments to, for naming it in errors. */
  dispatched?: Command;
}

function buildProgram(argv: readonly string[], state: ParseState): Command {
  const program = new Command("studyflow")
    // Commander's errors become exceptions, shown by the entry like any other usage error (JSON under --json).
    .exitOverride()
    .configureOutput({
      writeOut: (text) => {
        state.helpText += text;
      },
      writeErr: () => undefined,
      outputError: () => undefined,
    })
    .configureHelp({ formatHelp: (command) => usageText(command) })
    .showSuggestionAfterError(false)
    // Unknown flags and stray arguments are reported by leftoverProblem, in the CLI's words.
    .allowUnknownOption()
    .allowExcessArguments()
    // The program's own action answers "--help", so that "frobnicate --help" still names the unknown command.
    .helpOption(false)
    .helpCommand(false)
    .action((_values: unknown, self: Command) => {
      const [first] = self.args;
      if (first !== undefined && !HELP_FLAGS.has(first)) throw unknownCommand(first);
      state.line = { kind: "help", text: program.helpInformation() };
    });
  program.hook("preSubcommand", (_program, command) => {
    state.dispatched = command;
  });

  for (const definition of COMMANDS) {
    const command = program
      .command(definition.name)
      .description(definition.summary)
      .helpOption(true)
      .allowUnknownOption();
    for (const flag of definition.flags()) command.addOption(flag);
    command.addOption(new Option("--json", "print one JSON object on stdout instead of text"));
    command.action((values: Record<string, unknown>, self: Command) => {
      const problem = leftoverProblem(self, argv);
      if (problem !== undefined) throw new UsageError(`${definition.name}: ${problem}`);
      let bound: BoundCommand;
      try {
        bound = definition.bind(values);
      } catch (error) {
        if (error instanceof z.ZodError) throw new UsageError(`${definition.name}: ${valueProblem(self, error)}`);
        throw error;
      }
      state.line = { kind: "run", command: definition.name, json: values.json === true, ...bound };
    });
  }

  program
    .command(HELP_COMMAND)
    .argument("[command]")
    .allowUnknownOption()
    .action((topic: string | undefined) => {
      const text = topic === undefined ? program.helpInformation() : findCommand(program, topic).helpInformation();
      state.line = { kind: "help", text };
    });
  return program;
}

/**
 * Checks a whole command line (everything after the program name) without touching the
 * database, so a typo costs no connection and changes nothing.
 *
 * @throws UsageError naming the unknown command, or the flag that is unknown, missing or malformed.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const state: ParseState = { helpText: "" };
  const program = buildProgram(argv, state);
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Exit code 0 is commander's way of saying it printed the help.
    if (error.exitCode === 0) return { kind: "help", text: state.helpText };
    throw commanderProblem(error, state.dispatched, argv);
  }
  if (!state.line) throw new Error(`the command line ${JSON.stringify(argv)} led nowhere`);
  return state.line;
}

/** The usage of every command, or of the one named. */
export function usage(commandName?: string): string {
  const program = buildProgram([], { helpText: "" });
  return (commandName === undefined ? program : findCommand(program, commandName)).helpInformation();
}
