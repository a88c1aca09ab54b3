import { Option } from "commander";
import { createReportExportTask } from "@studyflow/domain/exports";
import { oneOf, text } from "../flag-values";
import { defineExportCommand, guardFormulasFlag, guardFormulasValue } from "./export-task";

export const REPORT_EXPORT_FORMATS = ["raw", "csv"] as const;

export const exportReportsCommand = defineExportCommand({
  name: "export:reports",
  summary: "export a study's reports (JSON or CSV, as CASE writes them), follow it and download the file",
  flags: () => [
    new Option("--report-key <KEY>", "only reports with this key"),
    new Option("--format <FORMAT>", "raw (default: CASE's JSON) or csv (a column per data key)"),
    guardFormulasFlag(),
  ],
  selection: {
    rows: "reports",
    filterExample: '{"participantID": "p1"}',
    sortHelp: "row order, e.g. '{\"timestamp\": -1}'",
  },
  values: {
    reportKey: text.optional(),
    format: oneOf(REPORT_EXPORT_FORMATS).default("raw"),
    ...guardFormulasValue,
  },
  request: (values) => ({
    ...(values.reportKey === undefined ? {} : { reportKey: values.reportKey }),
    format: values.format,
    guardFormulas: values.guardFormulas,
  }),
  record: createReportExportTask,
});
