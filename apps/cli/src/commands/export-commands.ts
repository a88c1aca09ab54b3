import type { CliCommand } from "../command-definition";
import { exportFollowCommand } from "./export-follow";
import { exportParticipantsCommand } from "./export-participants";
import { exportReportsCommand } from "./export-reports";
import { exportResponsesCommand } from "./export-responses";
import { exportSurveyInfoCommand } from "./export-survey-info";

/** The export commands, in the order the usage lists them (one file per command beside this one). */
export const EXPORT_COMMANDS: readonly CliCommand[] = [
  exportResponsesCommand,
  exportParticipantsCommand,
  exportReportsCommand,
  exportFollowCommand,
  exportSurveyInfoCommand,
];
