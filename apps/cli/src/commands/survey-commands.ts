import type { CliCommand } from "../command-definition";
import { surveyListCommand } from "./survey-list";
import { surveyUnpublishCommand } from "./survey-unpublish";
import { surveyUploadCommand } from "./survey-upload";

/** The survey commands, in the order the usage lists them (one file per command beside this one). */
export const SURVEY_COMMANDS: readonly CliCommand[] = [surveyUploadCommand, surveyListCommand, surveyUnpublishCommand];
