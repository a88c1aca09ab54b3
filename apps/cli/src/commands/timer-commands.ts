import type { CliCommand } from "../command-definition";

/** The timer commands, in the order the usage lists them (one file per command beside this one). */
export const TIMER_COMMANDS: readonly CliCommand[] = [];
