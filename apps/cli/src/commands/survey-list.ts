import { Option } from "commander";
import { z } from "zod";
import { listSurveys } from "@studyflow/domain/surveys";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { studyKey } from "../flag-values";

export async function surveyList(ctx: CliContext, input: { studyKey: string }) {
  await requireStudy(ctx.database.db, input.studyKey);
  const surveys = await listSurveys(ctx.database.db, input.studyKey);
  const data = {
    studyKey: input.studyKey,
    surveys: surveys.map((survey) => ({
      surveyKey: survey.surveyKey,
      currentVersionId: survey.currentVersionId,
      publishedAt: survey.publishedAt?.toISOString() ?? null,
      versionCount: survey.versionCount,
      unpublishedAt: survey.unpublishedAt?.toISOString() ?? null,
    })),
  };
  const width = Math.max(0, ...data.surveys.map((survey) => survey.surveyKey.length));
  ctx.output.result(data, [
    `${surveys.length} survey${surveys.length === 1 ? "" : "s"} in study "${input.studyKey}"`,
    ...data.surveys.map((survey) => {
      const state =
        survey.currentVersionId === null
          ? `unpublished since ${survey.unpublishedAt ?? "?"}`
          : `current ${survey.currentVersionId} (published ${survey.publishedAt ?? "?"})`;
      const count = `${survey.versionCount} version${survey.versionCount === 1 ? "" : "s"}`;
      return `${survey.surveyKey.padEnd(width)}  ${state}  ${count}`;
    }),
  ]);
  return data;
}

export const surveyListCommand = defineCommand({
  name: "survey:list",
  summary: "list a study's surveys with their current version",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: surveyList,
});
