// Reports of the current event, most recent first. Later actions address the most recent report
// with a key, so INIT_REPORT twice starts a second report.
import type { EvalContext } from "../eval-context";
import { firstTextProblem } from "../text-values";
import { nowSeconds, reject } from "../eval-context";
import { finiteInt64, finiteNumber } from "../finite-numbers";
import { NO_PARTICIPANT_FIELDS, actionFamily, anyArg, optional, strArg } from "../function-spec";
import { formatTruncatedInt } from "../go-compatible-format";
import type { Report, ReportData } from "../types";
import { flagText } from "./participant-actions";

const PARSE = "could not parse arguments";

function newReport(ctx: EvalContext, key: string): Report {
  return { key, participantId: ctx.state.participantId, timestamp: nowSeconds(ctx), data: [] };
}

/**
 * Report text of a value: like flags, except that dtype "int" formats numbers as integers. A number
 * must be finite, and with dtype "int" fit int64 (Go printed the minimum int64 instead); otherwise
 * the failure message.
 */
function reportText(value: unknown, dtype: string): { text: string } | string {
  if (typeof value !== "number") return { text: flagText(value) };
  if (dtype === "int") {
    const checked = finiteInt64(value, "value");
    return typeof checked === "string" ? checked : { text: formatTruncatedInt(checked) };
  }
  const checked = finiteNumber(value, "value");
  return typeof checked === "string" ? checked : { text: flagText(checked) };
}

function replaceReport(ctx: EvalContext, index: number, report: Report): true {
  ctx.reports = ctx.reports.map((r, i) => (i === index ? report : r));
  return true;
}

export const reportActions = actionFamily("report", [
  {
    name: "INIT_REPORT",
    summary: "starts a new report {key, participantId, timestamp: now} in front of the others",
    participantFields: { reads: ["participantId"], writes: [] },
    args: [strArg("reportKey", PARSE)],
    perform: (ctx, [key]) => {
      ctx.reports = [newReport(ctx, key as string), ...ctx.reports];
      return true;
    },
  },
  {
    name: "UPDATE_REPORT_DATA",
    summary:
      'upserts {key, value, dtype} in the most recent report with the key (starting one if none); numbers are "%d" with dtype "int", else six decimals; a non-finite number (with "int": one beyond int64) is an error',
    participantFields: { reads: ["participantId"], writes: [] },
    args: [
      strArg("reportKey", PARSE),
      strArg("attributeKey", PARSE),
      anyArg("value"),
      optional(strArg("dtype", PARSE)),
    ],
    perform: (ctx, args) => {
      const [reportKey, attributeKey, value] = args as [string, string, unknown];
      const dtype = args.length > 3 ? (args[3] as string) : "";
      // checked before a report is started, so a failure leaves nothing behind
      const text = reportText(value, dtype);
      if (typeof text === "string") return reject(ctx, text);
      const unstorable = firstTextProblem({ reportKey, attributeKey, value: text.text, dtype }, "report");
      if (unstorable) return reject(ctx, unstorable);
      let index = ctx.reports.findIndex((r) => r.key === reportKey);
      if (index < 0) {
        ctx.reports = [newReport(ctx, reportKey), ...ctx.reports];
        index = 0;
      }
      const report = ctx.reports[index] as Report;
      const entry: ReportData = {
        key: attributeKey,
        value: text.text,
        ...(dtype !== "" ? { dtype } : {}),
      };
      const at = report.data.findIndex((d) => d.key === attributeKey);
      const data = at < 0 ? [...report.data, entry] : report.data.map((d, i) => (i === at ? entry : d));
      return replaceReport(ctx, index, { ...report, data });
    },
  },
  {
    name: "REMOVE_REPORT_DATA",
    summary: "removes the entry from the most recent report with the key; no report is a no-op",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("reportKey", PARSE), strArg("attributeKey", PARSE)],
    perform: (ctx, [reportKey, attributeKey]) => {
      const index = ctx.reports.findIndex((r) => r.key === reportKey);
      const report = ctx.reports[index];
      if (!report) return true;
      const at = report.data.findIndex((d) => d.key === attributeKey);
      if (at < 0) return true;
      return replaceReport(ctx, index, { ...report, data: report.data.filter((_, i) => i !== at) });
    },
  },
  {
    name: "CANCEL_REPORT",
    summary: "drops the most recent report with the key",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("reportKey", PARSE)],
    perform: (ctx, [reportKey]) => {
      const index = ctx.reports.findIndex((r) => r.key === reportKey);
      if (index >= 0) ctx.reports = ctx.reports.filter((_, i) => i !== index);
      return true;
    },
  },
]);
