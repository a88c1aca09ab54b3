import type { CliCommand } from "../command-definition";

/** The service key commands, in the order the usage lists them (one file per command beside this one). */
export const SERVICE_KEY_COMMANDS: readonly CliCommand[] = [];
