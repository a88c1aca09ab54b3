import { Option } from "commander";
import { z } from "zod";
import { unpublishSurvey } from "@studyflow/domain/surveys";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy, UPLOADED_BY } from "../command-support";
import { studyKey } from "../flag-values";

export interface SurveyUnpublishInput {
  studyKey: string;
  surveyKey: string;
}

export async function surveyUnpublish(ctx: CliContext, input: SurveyUnpublishInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const result = await unpublishSurvey(
    ctx.database.db,
    { studyKey: input.studyKey, surveyKey: input.surveyKey, actor: UPLOADED_BY },
    ctx,
  );
  const data = {
    studyKey: input.studyKey,
    surveyKey: result.surveyKey,
    unpublishedAt: result.unpublishedAt.toISOString(),
    versionsUnpublished: result.versionsUnpublished,
  };
  ctx.output.result(data, [
    `survey "${result.surveyKey}" unpublished in study "${input.studyKey}" ` +
      `(${result.versionsUnpublished} version${result.versionsUnpublished === 1 ? "" : "s"}); ` +
      "an upload publishes it again",
  ]);
  return data;
}

export const surveyUnpublishCommand = defineCommand({
  name: "survey:unpublish",
  summary: "unpublish a survey: participants can no longer fetch it until its next upload",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--survey <KEY>", "survey key").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, survey: studyKey })
    .transform(({ study, survey }): SurveyUnpublishInput => ({ studyKey: study, surveyKey: survey })),
  uses: "database",
  run: surveyUnpublish,
});
