import { Option } from "commander";
import { z } from "zod";
import { DEFAULT_QUESTION_OPTION_SEP } from "@studyflow/case-export";
import { getDailyExportConfig, setDailyExportConfig, type DailyExportConfig } from "@studyflow/domain/exports";
import { defineCommand, type CliContext } from "../command-definition";
import { commaList, oneOf, studyKey, switchFlag, text } from "../flag-values";
import { fieldLines } from "../output";
import { OPERATOR, guardFormulasFlag, guardFormulasValue } from "./export-task";

/** The settings as both daily-export commands print them: one JSON object, or aligned lines. */
function printConfig(ctx: CliContext, studyKey: string, config: DailyExportConfig | null) {
  const data = {
    dailyExport: config && {
      studyKey,
      surveyKeys: config.surveyKeys,
      enabled: config.enabled,
      options: config.options,
      updatedBy: config.updatedBy,
      updatedAt: config.updatedAt.toISOString(),
    },
  };
  if (!config) {
    ctx.output.result(data, [`study "${studyKey}" has no daily export`]);
    return data;
  }
  const { options } = config;
  ctx.output.result(data, [
    `daily export of study "${studyKey}"`,
    ...fieldLines([
      ["state", config.enabled ? "on: every day, the previous UTC day's responses" : "off"],
      ["surveys", config.surveyKeys.join(", ") || "none"],
      ["format", `${options.format}${options.gzip ? ", gzip" : ""}${options.shortKeys ? ", short keys" : ""}`],
      ["option separator", options.questionOptionSep],
      ["context columns", options.extraContextColumns.join(", ") || undefined],
      ["formula guard", options.guardFormulas ? "on" : "off (CASE's exact bytes)"],
      ["updated", `${config.updatedAt.toISOString()} by ${config.updatedBy}`],
    ]),
  ]);
  return data;
}

export interface DailyExportSetInput {
  studyKey: string;
  surveyKeys: string[];
  enabled: boolean;
  format: "wide" | "long" | "json";
  questionOptionSep: string;
  shortKeys: boolean;
  extraContextColumns: string[];
  gzip: boolean;
  guardFormulas: boolean;
}

export async function dailyExportSet(ctx: CliContext, input: DailyExportSetInput) {
  const { studyKey: key, surveyKeys, enabled, ...options } = input;
  const config = await setDailyExportConfig(
    ctx.database.db,
    key,
    {
      surveyKeys,
      enabled,
      options: {
        ...options,
        includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
      },
    },
    OPERATOR.subject,
    ctx,
  );
  return printConfig(ctx, key, config);
}

export async function dailyExportShow(ctx: CliContext, input: { studyKey: string }) {
  return printConfig(ctx, input.studyKey, await getDailyExportConfig(ctx.database.db, input.studyKey));
}

export const dailyExportSetCommand = defineCommand({
  name: "daily-export:set",
  summary: "export chosen surveys of a study every day (the previous UTC day's responses, one file per survey)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--surveys <KEYS>", "comma-separated survey keys, e.g. weekly,intake").makeOptionMandatory(),
    new Option("--format <FORMAT>", "wide (default), long or json"),
    new Option(
      "--question-option-sep <SEP>",
      `separator of question and option keys (default "${DEFAULT_QUESTION_OPTION_SEP}")`,
    ),
    new Option("--short-keys", "column names without the survey key"),
    new Option("--extra-context-columns <KEYS>", "comma-separated context keys to add as columns"),
    new Option("--gzip", "store the files gzip-compressed"),
    guardFormulasFlag(),
    new Option("--off", "keep the settings but stop the daily exports"),
  ],
  values: z
    .object({
      study: studyKey,
      surveys: commaList,
      format: oneOf(["wide", "long", "json"] as const).default("wide"),
      questionOptionSep: text.default(DEFAULT_QUESTION_OPTION_SEP),
      shortKeys: switchFlag,
      extraContextColumns: commaList.optional(),
      gzip: switchFlag,
      ...guardFormulasValue,
      off: switchFlag,
    })
    .transform((values): DailyExportSetInput => ({
      studyKey: values.study,
      surveyKeys: values.surveys,
      enabled: !values.off,
      format: values.format,
      questionOptionSep: values.questionOptionSep,
      shortKeys: values.shortKeys,
      extraContextColumns: values.extraContextColumns ?? [],
      gzip: values.gzip,
      guardFormulas: values.guardFormulas,
    })),
  uses: "database",
  run: dailyExportSet,
});

export const dailyExportShowCommand = defineCommand({
  name: "daily-export:show",
  summary: "show which surveys of a study are exported every day, and how",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform((values) => ({ studyKey: values.study })),
  uses: "database",
  run: dailyExportShow,
});
