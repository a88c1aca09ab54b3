import { Option } from "commander";
import { z } from "zod";
import { createReportExportTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { text } from "../flag-values";
import {
  OPERATOR,
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

export interface ExportReportsInput extends StartOptions, SelectionOptions {
  reportKey?: string | undefined;
}

export async function exportReports(ctx: ExportContext, input: ExportReportsInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  return startExport(ctx, input, () =>
    createReportExportTask(
      ctx.database.db,
      input.studyKey,
      {
        ...(input.reportKey === undefined ? {} : { reportKey: input.reportKey }),
        ...selectionRequest(input),
      },
      OPERATOR.subject,
    ),
  );
}

export const exportReportsCommand = defineCommand({
  name: "export:reports",
  summary: "export a study's reports (JSON, as CASE writes them), follow it and download the file",
  flags: () => [
    studyFlag(),
    new Option("--report-key <KEY>", "only reports with this key"),
    ...selectionFlags({
      rows: "reports",
      filterExample: '{"participantID": "p1"}',
      sortHelp: "row order, e.g. '{\"timestamp\": -1}'",
    }),
    ...startFlags(),
  ],
  values: z
    .object({ reportKey: text.optional(), ...selectionValues, ...startValues })
    .transform((values): ExportReportsInput => ({ ...startInput(values), reportKey: values.reportKey })),
  uses: "database",
  run: exportReports,
});
