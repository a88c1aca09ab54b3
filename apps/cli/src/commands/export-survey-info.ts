import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Option } from "commander";
import { z } from "zod";
import { surveyInfo } from "@studyflow/case-export";
import { surveyVersionsForFormatting } from "@studyflow/domain/data-explorer";
import { Invalid } from "@studyflow/domain/errors";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { languageTag, oneOf, studyKey, switchFlag, text } from "../flag-values";
import { fieldLines } from "../output";
import { formatBytes, studyFlag } from "./export-task";

export interface ExportSurveyInfoInput {
  studyKey: string;
  surveyKey: string;
  language: string;
  format: "csv" | "json";
  shortKeys: boolean;
  out?: string | undefined;
}

/**
 * A survey's codebook (CASE's survey-info): every version's questions, response slots and option
 * labels in one language. Small (a survey has a handful of versions), so it is built here at once
 * rather than as a task.
 */
export async function exportSurveyInfo(ctx: CliContext, input: ExportSurveyInfoInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const versions = await surveyVersionsForFormatting(ctx.database.db, input.studyKey, input.surveyKey);
  if (versions.length === 0) throw new Invalid(`--survey: no survey "${input.surveyKey}" in study "${input.studyKey}"`);
  const file = surveyInfo(input.surveyKey, versions, {
    language: input.language,
    shortKeys: input.shortKeys,
    format: input.format,
    studyKey: input.studyKey,
  });
  const path = resolve(ctx.workingDirectory, input.out ?? file.fileName);
  await writeFile(path, file.text, "utf8");
  const size = Buffer.byteLength(file.text, "utf8");
  const data = {
    studyKey: input.studyKey,
    surveyKey: input.surveyKey,
    versions: versions.length,
    file: { path, size, contentType: file.contentType },
  };
  ctx.output.result(data, [
    `codebook of survey "${input.surveyKey}" (${versions.length} version${versions.length === 1 ? "" : "s"}) written to ${path}`,
    ...fieldLines([
      ["size", formatBytes(size)],
      ["type", file.contentType],
    ]).map((line) => `  ${line}`),
  ]);
  return data;
}

export const exportSurveyInfoCommand = defineCommand({
  name: "export:survey-info",
  summary: "write a survey's codebook (CASE's survey-info: questions, slots and option labels of every version)",
  flags: () => [
    studyFlag(),
    new Option("--survey <KEY>", "survey key").makeOptionMandatory(),
    new Option("--language <TAG>", "language of titles and labels (default en)"),
    new Option("--format <FORMAT>", "csv or json (default csv)"),
    new Option("--short-keys", "item keys without the survey key in front"),
    new Option(
      "--out <FILE>",
      "where to write it (default: survey-infos_<study>_<survey>.<format>, in this directory)",
    ),
  ],
  values: z
    .object({
      study: studyKey,
      survey: text,
      language: languageTag.default("en"),
      format: oneOf(["csv", "json"] as const).default("csv"),
      shortKeys: switchFlag,
      out: text.optional(),
    })
    .transform((values): ExportSurveyInfoInput => ({
      studyKey: values.study,
      surveyKey: values.survey,
      language: values.language,
      format: values.format,
      shortKeys: values.shortKeys,
      out: values.out,
    })),
  uses: "database",
  run: exportSurveyInfo,
});
