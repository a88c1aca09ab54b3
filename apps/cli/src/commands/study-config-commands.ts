import type { CliCommand } from "../command-definition";

/** The study config commands, in the order the usage lists them (one file per command beside this one). */
export const STUDY_CONFIG_COMMANDS: readonly CliCommand[] = [];
