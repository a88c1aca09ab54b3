import type { CliCommand } from "../command-definition";

/** The survey commands, in the order the usage lists them (one file per command beside this one). */
export const SURVEY_COMMANDS: readonly CliCommand[] = [];
