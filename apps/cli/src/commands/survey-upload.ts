import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Option } from "commander";
import { z } from "zod";
import { Invalid, SurveyDefinitionTooLarge, publishSurveyVersion } from "@studyflow/domain";
import { defineCommand, type CliContext, type OutputContext } from "../command-definition";
import { requireStudy, UPLOADED_BY } from "../command-support";
import { studyKey, text } from "../flag-values";

export interface SurveyUploadInput {
  studyKey: string;
  file: string;
}

/** Reads a survey file as JSON; what it must hold is the domain's to check. */
async function readSurveyFile(ctx: OutputContext, file: string): Promise<unknown> {
  let content: string;
  try {
    content = await readFile(resolve(ctx.workingDirectory, file), "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
    throw new Invalid(`cannot read survey file ${file}: ${reason}`);
  }
  try {
    return JSON.parse(content) as unknown;
  } catch (error) {
    throw new Invalid(`survey file ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export async function surveyUpload(ctx: CliContext, input: SurveyUploadInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const survey = await readSurveyFile(ctx, input.file);
  const version = await publishSurveyVersion(
    ctx.database.db,
    { studyKey: input.studyKey, actor: UPLOADED_BY, survey },
    { clock: Date.now },
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
