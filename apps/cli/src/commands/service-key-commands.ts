import type { CliCommand } from "../command-definition";
import { serviceKeyCreateCommand } from "./service-key-create";
import { serviceKeyListCommand } from "./service-key-list";
import { serviceKeyRevokeCommand } from "./service-key-revoke";

/** The service key commands, in the order the usage lists them (one file per command beside this one). */
export const SERVICE_KEY_COMMANDS: readonly CliCommand[] = [
  serviceKeyCreateCommand,
  serviceKeyListCommand,
  serviceKeyRevokeCommand,
];
