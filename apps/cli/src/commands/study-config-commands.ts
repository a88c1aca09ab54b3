import type { CliCommand } from "../command-definition";
import { auditLogListCommand } from "./audit-log-list";
import { codeListAddCommand } from "./code-list-add";
import { codeListCountCommand } from "./code-list-count";
import { codeListListCommand } from "./code-list-list";
import { codeListRemoveCommand } from "./code-list-remove";
import { rulesListCommand } from "./rules-list";
import { rulesShowCommand } from "./rules-show";
import { studyShowCommand } from "./study-show";
import { studyUpdateCommand } from "./study-update";
import { variableDeleteCommand } from "./variable-delete";
import { variableListCommand } from "./variable-list";
import { variableSetCommand } from "./variable-set";

/** The study config commands, in the order the usage lists them (one file per command beside this one). */
export const STUDY_CONFIG_COMMANDS: readonly CliCommand[] = [
  studyShowCommand,
  studyUpdateCommand,
  codeListAddCommand,
  codeListListCommand,
  codeListCountCommand,
  codeListRemoveCommand,
  variableSetCommand,
  variableListCommand,
  variableDeleteCommand,
  rulesListCommand,
  rulesShowCommand,
  auditLogListCommand,
];
