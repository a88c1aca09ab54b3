import type { CliCommand } from "../command-definition";
import { serviceAccountCreateCommand } from "./service-account-create";
import { serviceAccountDeleteCommand } from "./service-account-delete";
import { serviceAccountKeyCreateCommand } from "./service-account-key-create";
import { serviceAccountListCommand } from "./service-account-list";

/** The service account commands, in the order the usage lists them (one file per command beside this one). */
export const SERVICE_ACCOUNT_COMMANDS: readonly CliCommand[] = [
  serviceAccountCreateCommand,
  serviceAccountListCommand,
  serviceAccountDeleteCommand,
  serviceAccountKeyCreateCommand,
];
