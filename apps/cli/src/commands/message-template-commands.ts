import type { CliCommand } from "../command-definition";
import { messageTemplateDeleteCommand } from "./message-template-delete";
import { messageTemplateListCommand } from "./message-template-list";
import { messageTemplateSetCommand } from "./message-template-set";

/** The message template commands, in the order the usage lists them (one file per command beside this one). */
export const MESSAGE_TEMPLATE_COMMANDS: readonly CliCommand[] = [
  messageTemplateSetCommand,
  messageTemplateListCommand,
  messageTemplateDeleteCommand,
];
