import { Option } from "commander";
import { z } from "zod";
import { DEFAULT_QUESTION_OPTION_SEP, type IncludeMeta } from "@studyflow/case-export";
import { createResponseExportTask } from "@studyflow/domain/exports";
import { commaList, oneOf, switchFlag, text } from "../flag-values";
import { defineExportCommand, guardFormulasFlag, guardFormulasValue } from "./export-task";

export const RESPONSE_EXPORT_FORMATS = ["wide", "long", "json"] as const;
/** CASE's per-question meta columns, off unless named (CASE's HTTP API never turns them on). */
export const META_COLUMNS = ["position", "initTimes", "displayedTimes", "responsedTimes"] as const;

export const exportResponsesCommand = defineExportCommand({
  name: "export:responses",
  summary: "export a survey's responses (CASE's CSV or JSON) through the workers, follow it and download the file",
  flags: () => [
    new Option("--survey <KEY>", "survey key").makeOptionMandatory(),
    new Option("--format <FORMAT>", `${RESPONSE_EXPORT_FORMATS.join(", ")} (default wide: one row per response)`),
    new Option("--short-keys", "item keys without the survey key in front"),
    new Option(
      "--question-option-sep <SEP>",
      `between a question's key and its option's in column names (default "${DEFAULT_QUESTION_OPTION_SEP}")`,
    ),
    new Option("--extra-context-columns <A,B>", "context fields of the responses to add as columns"),
    new Option("--include-meta <A,B>", `per-question meta columns: any of ${META_COLUMNS.join(", ")}`),
    guardFormulasFlag(),
  ],
  selection: {
    rows: "responses",
    filterExample: '{"participantID": "p1"}',
    sortHelp: 'row order, {"submittedAt": 1|-1} or {"arrivedAt": 1|-1} (default: as they arrived)',
  },
  values: {
    survey: text,
    format: oneOf(RESPONSE_EXPORT_FORMATS).default("wide"),
    shortKeys: switchFlag,
    questionOptionSep: z.string().default(DEFAULT_QUESTION_OPTION_SEP),
    extraContextColumns: commaList.default([]),
    includeMeta: commaList
      .pipe(z.array(z.enum(META_COLUMNS, { error: `lists any of ${META_COLUMNS.join(", ")}` })))
      .default([]),
    ...guardFormulasValue,
  },
  request: (values) => ({
    surveyKey: values.survey,
    format: values.format,
    shortKeys: values.shortKeys,
    questionOptionSep: values.questionOptionSep,
    extraContextColumns: values.extraContextColumns,
    includeMeta: Object.fromEntries(
      META_COLUMNS.map((column) => [column, values.includeMeta.includes(column)]),
    ) as unknown as IncludeMeta,
    guardFormulas: values.guardFormulas,
  }),
  record: createResponseExportTask,
});
