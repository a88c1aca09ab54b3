import type { CliCommand } from "../command-definition";

/** The subscription commands, in the order the usage lists them (one file per command beside this one). */
export const SUBSCRIPTION_COMMANDS: readonly CliCommand[] = [];
