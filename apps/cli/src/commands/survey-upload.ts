import { Option } from "commander";
import { z } from "zod";
import { Invalid } from "@studyflow/domain/errors";
import { SurveyDefinitionTooLarge, publishSurveyVersion } from "@studyflow/domain/surveys";
import { defineCommand, type CliContext } from "../command-definition";
import { readJsonFile, requireStudy, UPLOADED_BY } from "../command-support";
import { studyKey, text } from "../flag-values";

export interface SurveyUploadInput {
  studyKey: string;
  file: string;
}

export async function surveyUpload(ctx: CliContext, input: SurveyUploadInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const survey = await readJsonFile(ctx, input.file, "survey file");
  const version = await publishSurveyVersion(
    ctx.database.db,
    { studyKey: input.studyKey, actor: UPLOADED_BY, survey },
    ctx,
  ).catch((error: unknown) => {
    // too large is the operator's input, not a failure of the system: exit code 1 like any invalid file
    if (error instanceof SurveyDefinitionTooLarge) throw new Invalid(`${input.file}: ${error.message}`);
    throw error;
  });
  const data = {
    studyKey: input.studyKey,
    surveyKey: version.surveyKey,
    versionId: version.versionId,
    publishedAt: version.publishedAt.toISOString(),
  };
  ctx.output.result(data, [
    `survey "${version.surveyKey}" version ${version.versionId} published in study "${input.studyKey}"`,
  ]);
  return data;
}

export const surveyUploadCommand = defineCommand({
  name: "survey:upload",
  summary: "upload a survey definition (CASE Survey JSON) as the survey's new, published version",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--file <PATH>", "JSON file holding a CASE Survey, as case-editor-tools write it").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, file: text })
    .transform(({ study, file }): SurveyUploadInput => ({ studyKey: study, file })),
  uses: "database",
  run: surveyUpload,
});
