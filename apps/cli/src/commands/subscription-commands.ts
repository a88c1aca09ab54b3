import type { CliCommand } from "../command-definition";
import { subscriptionAddCommand } from "./subscription-add";
import { subscriptionListCommand } from "./subscription-list";
import { subscriptionRemoveCommand } from "./subscription-remove";

/** The subscription commands, in the order the usage lists them (one file per command beside this one). */
export const SUBSCRIPTION_COMMANDS: readonly CliCommand[] = [
  subscriptionAddCommand,
  subscriptionListCommand,
  subscriptionRemoveCommand,
];
