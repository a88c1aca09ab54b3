import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { countReports, createReportExportTask } from "@studyflow/domain/exports";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { startExportResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";
import { guardFormulasQuery, gzipQuery, startExport } from "./start-export";
import { selectionQuery, reportSelection } from "./report-selection";

const group = EXPORT_GROUPS.reports;

export function registerStartReportsExport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/reports/",
      tags: ["data-exporter"],
      summary: "Start an export of reports: CASE's raw JSON or CSV",
      description:
        "Records an export task and queues it. `type=raw` (default) writes CASE's JSON, `type=csv` its CSV (data values guarded against spreadsheet formulas unless `guardFormulas=false`). When no " +
        'report matches: 200 `{"error": "no reports to export"}` and no task, as case-backend answers. ' +
        `Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: z.object({
          ...selectionQuery,
          type: z
            .enum(["raw", "csv"], { error: 'type must be "raw" or "csv"' })
            .optional()
            .openapi({ description: "raw (JSON, default) or csv" }),
          gzip: gzipQuery,
          guardFormulas: guardFormulasQuery,
        }),
      },
      responses: startExportResponses("report", "an unknown type, a bad time window or filter (the message names it)"),
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, group.permission);
      const selection = reportSelection(query);
      await getStudy(db, studyKey);
      return startExport(c, deps, group, {
        count: () => countReports(db, studyKey, selection),
        create: () =>
          createReportExportTask(
            db,
            studyKey,
            {
              ...selection,
              format: query.type ?? "raw",
              gzip: query.gzip ?? false,
              ...(query.guardFormulas === undefined ? {} : { guardFormulas: query.guardFormulas }),
            },
            who.subject,
          ),
      });
    },
  );
}
