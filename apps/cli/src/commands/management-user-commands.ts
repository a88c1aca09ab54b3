import type { CliCommand } from "../command-definition";
import { managementUserDeleteCommand } from "./management-user-delete";
import { managementUserListCommand } from "./management-user-list";
import { managementUserShowCommand } from "./management-user-show";

/** The management user commands, in the order the usage lists them (one file per command beside this one). */
export const MANAGEMENT_USER_COMMANDS: readonly CliCommand[] = [
  managementUserListCommand,
  managementUserShowCommand,
  managementUserDeleteCommand,
];
