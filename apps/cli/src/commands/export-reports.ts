import { Option } from "commander";
import { z } from "zod";
import { createReportExportTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { oneOf, text } from "../flag-values";
import {
  OPERATOR,
  guardFormulasFlag,
  guardFormulasValue,
  selectionFlags,
  selectionRequest,
  selectionValues,
  startExport,
  startFlags,
  startInput,
  startValues,
  studyFlag,
  type ExportContext,
  type SelectionOptions,
  type StartOptions,
} from "./export-task";

export const REPORT_EXPORT_FORMATS = ["raw", "csv"] as const;

export interface ExportReportsInput extends StartOptions, SelectionOptions {
  reportKey?: string | undefined;
  format: (typeof REPORT_EXPORT_FORMATS)[number];
  guardFormulas: boolean;
}

export async function exportReports(ctx: ExportContext, input: ExportReportsInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  return startExport(ctx, input, () =>
    createReportExportTask(
      ctx.database.db,
      input.studyKey,
      {
        ...(input.reportKey === undefined ? {} : { reportKey: input.reportKey }),
        format: input.format,
        guardFormulas: input.guardFormulas,
        ...selectionRequest(input),
      },
      OPERATOR.subject,
    ),
  );
}

export const exportReportsCommand = defineCommand({
  name: "export:reports",
  summary: "export a study's reports (JSON or CSV, as CASE writes them), follow it and download the file",
  flags: () => [
    studyFlag(),
    new Option("--report-key <KEY>", "only reports with this key"),
    new Option("--format <FORMAT>", "raw (default: CASE's JSON) or csv (a column per data key)"),
    guardFormulasFlag(),
    ...selectionFlags({
      rows: "reports",
      filterExample: '{"participantID": "p1"}',
      sortHelp: "row order, e.g. '{\"timestamp\": -1}'",
    }),
    ...startFlags(),
  ],
  values: z
    .object({
      reportKey: text.optional(),
      format: oneOf(REPORT_EXPORT_FORMATS).default("raw"),
      ...guardFormulasValue,
      ...selectionValues,
      ...startValues,
    })
    .transform((values): ExportReportsInput => ({
      ...startInput(values),
      reportKey: values.reportKey,
      format: values.format,
      guardFormulas: values.guardFormulas,
    })),
  uses: "database",
  run: exportReports,
});
