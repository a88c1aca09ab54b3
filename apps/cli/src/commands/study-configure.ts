import { Option } from "commander";
import { z } from "zod";
import { updateStudySettings, type StudySettings } from "@studyflow/domain/study-setup";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY, requireStudy } from "../command-support";
import { UsageError } from "../failures";
import { oneOf, studyKey, text } from "../flag-values";
import { fieldLines } from "../output";

export interface StudyConfigureInput {
  key: string;
  settings: StudySettings;
}

export async function studyConfigure(ctx: CliContext, input: StudyConfigureInput) {
  await requireStudy(ctx.database.db, input.key);
  const settings = await updateStudySettings(ctx.database.db, input.key, input.settings, UPLOADED_BY, ctx);
  const data = { studyKey: input.key, settings };
  ctx.output.result(data, [
    `settings of study "${input.key}"`,
    ...fieldLines([
      [
        "strict rules",
        settings.strictRules ? "on (a failing rule rejects the event)" : "off (a failing rule is skipped)",
      ],
      ["time zone", settings.timeZone],
      [
        "unknown survey versions",
        settings.unknownSurveyVersion === "reject"
          ? "reject (the response is refused)"
          : "record (stored, and a rule failure recorded)",
      ],
    ]),
  ]);
  return data;
}

export const studyConfigureCommand = defineCommand({
  name: "study:configure",
  summary:
    "set how a study's rules run: strict mode, the time zone of their calendar functions, unknown survey versions",
  flags: () => [
    new Option("--key <KEY>", "study key").makeOptionMandatory(),
    new Option(
      "--strict-rules <on|off>",
      "on: any failing rule rejects a participant event (nothing stored); off (default): it is skipped and recorded",
    ),
    new Option("--time-zone <ZONE>", "IANA time zone of getTsForNextStartOfMonth & co., e.g. Europe/Amsterdam"),
    new Option(
      "--unknown-survey-version <reject|record>",
      "a response naming no uploaded version of its survey: reject it (400), or record (default) a rule failure",
    ),
  ],
  values: z
    .object({
      key: studyKey,
      strictRules: oneOf(["on", "off"]).optional(),
      timeZone: text.optional(),
      unknownSurveyVersion: oneOf(["reject", "record"]).optional(),
    })
    .transform(({ key, strictRules, timeZone, unknownSurveyVersion }): StudyConfigureInput => {
      if (strictRules === undefined && timeZone === undefined && unknownSurveyVersion === undefined) {
        throw new UsageError("give at least one of --strict-rules, --time-zone, --unknown-survey-version");
      }
      return {
        key,
        settings: {
          ...(strictRules === undefined ? {} : { strictRules: strictRules === "on" }),
          ...(timeZone === undefined ? {} : { timeZone }),
          ...(unknownSurveyVersion === undefined ? {} : { unknownSurveyVersion }),
        },
      };
    }),
  uses: "database",
  run: studyConfigure,
});
