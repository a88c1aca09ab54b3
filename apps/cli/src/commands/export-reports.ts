import { Option } from "commander";
import { z } from "zod";
import { createReportExportTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { jsonObject, studyKey, switchFlag, text } from "../flag-values";
import { OPERATOR, startExport, startFlags, startValues, type ExportContext, type StartOptions } from "./export-task";

export interface ExportReportsInput extends StartOptions {
  reportKey?: string | undefined;
  filter?: Record<string, unknown> | undefined;
  sort?: Record<string, unknown> | undefined;
  gzip: boolean;
}

export async function exportReports(ctx: ExportContext, input: ExportReportsInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  return startExport(ctx, input, () =>
    createReportExportTask(
      ctx.database.db,
      input.studyKey,
      {
        ...(input.reportKey === undefined ? {} : { reportKey: input.reportKey }),
        ...(input.filter === undefined ? {} : { filter: input.filter }),
        ...(input.sort === undefined ? {} : { sort: input.sort }),
        gzip: input.gzip,
      },
      OPERATOR.subject,
    ),
  );
}

export const exportReportsCommand = defineCommand({
  name: "export:reports",
  summary: "export a study's reports (JSON, as CASE writes them), follow it and download the file",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--report-key <KEY>", "only reports with this key"),
    new Option("--filter <JSON>", 'only the reports this Mongo-style filter matches, e.g. \'{"participantID": "p1"}\''),
    new Option("--sort <JSON>", "row order, e.g. '{\"timestamp\": -1}'"),
    new Option("--gzip", "store and download the file gzip-compressed"),
    ...startFlags(),
  ],
  values: z
    .object({
      study: studyKey,
      reportKey: text.optional(),
      filter: jsonObject.optional(),
      sort: jsonObject.optional(),
      gzip: switchFlag,
      ...startValues,
    })
    .transform((values): ExportReportsInput => ({
      studyKey: values.study,
      reportKey: values.reportKey,
      filter: values.filter,
      sort: values.sort,
      gzip: values.gzip,
      out: values.out,
      wait: values.wait,
      cancelOnInterrupt: values.cancelOnInterrupt,
    })),
  uses: "database",
  run: exportReports,
});
