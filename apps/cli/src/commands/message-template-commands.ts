import type { CliCommand } from "../command-definition";

/** The message template commands, in the order the usage lists them (one file per command beside this one). */
export const MESSAGE_TEMPLATE_COMMANDS: readonly CliCommand[] = [];
