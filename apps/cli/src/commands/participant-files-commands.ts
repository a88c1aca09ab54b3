import type { CliCommand } from "../command-definition";
import { participantFilesGetCommand } from "./participant-files-get";
import { participantFilesListCommand } from "./participant-files-list";
import { participantFilesUploadRuleCommand } from "./participant-files-upload-rule";

/** What researchers and operators do with participants' uploaded files. */
export const PARTICIPANT_FILES_COMMANDS: readonly CliCommand[] = [
  participantFilesListCommand,
  participantFilesGetCommand,
  participantFilesUploadRuleCommand,
];
