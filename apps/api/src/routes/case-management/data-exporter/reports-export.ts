import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  Invalid,
  assertStudyPermission,
  countReports,
  createReportExportTask,
  getStudy,
  parseCaseJsonParam,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { openapiBothSlashes } from "../../../case-compat";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { caseJsonQuery, unixSecondsQuery } from "./case-query";
import { EXPORT_GROUPS } from "./export-groups";
import { guardFormulasQuery, gzipQuery, startExport, startExportAnswer } from "./start-export";

const group = EXPORT_GROUPS.reports;

/** The query case-admin's report exporter sends: a report key, a participant, a time window. */
const selectionQuery = {
  reportKey: z.string().max(200).optional().openapi({ description: "only reports with this key", example: "symptoms" }),
  pid: z.string().max(200).optional().openapi({ description: "only this participant's reports" }),
  from: unixSecondsQuery("from", "only reports with timestamp ≥ from (Unix seconds)"),
  until: unixSecondsQuery("until", "only reports with timestamp ≤ until (Unix seconds)"),
  filter: caseJsonQuery("filter", "CASE's Mongo-style filter on key, participantID, responseID, timestamp, data"),
};

type Selection = {
  reportKey?: string | undefined;
  pid?: string | undefined;
  from?: number | undefined;
  until?: number | undefined;
  filter?: string | undefined;
};

/**
 * The query as one Mongo-style filter and the report key, as case-backend merges them (pid →
 * participantID, from/until → a timestamp range), so that the count and the export select alike.
 */
function reportSelection(query: Selection): { reportKey?: string; filter?: unknown } {
  if (query.from !== undefined && query.until !== undefined && query.from > query.until) {
    throw new Invalid(`from (${query.from}) is after until (${query.until})`);
  }
  const parts: unknown[] = [];
  const filter = parseCaseJsonParam("filter", query.filter);
  if (filter !== undefined) parts.push(filter);
  if (query.pid) parts.push({ participantID: query.pid });
  const window: Record<string, number> = {};
  if (query.from !== undefined) window["$gte"] = query.from;
  if (query.until !== undefined) window["$lte"] = query.until;
  if (Object.keys(window).length > 0) parts.push({ timestamp: window });
  return {
    ...(query.reportKey ? { reportKey: query.reportKey } : {}),
    ...(parts.length === 0 ? {} : { filter: parts.length === 1 ? parts[0] : { $and: parts } }),
  };
}

const countRoute = createRoute({
  method: "get",
  path: "/reports/count",
  tags: ["data-exporter"],
  summary: "Count the reports an export would hold (CASE)",
  description: `Reports matching reportKey, pid, from, until and filter. Requires \`${group.permission}\`.`,
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam, query: z.object(selectionQuery) },
  responses: {
    200: jsonContent(z.object({ count: z.number().int() }), "how many"),
    ...errorResponses([400, 401, 403, 404], {
      400: "from/until not Unix seconds or from after until; filter not valid",
      404: "study not found",
    }),
  },
});

const startRoute = createRoute({
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
  responses: {
    200: jsonContent(startExportAnswer, "the task, recorded and queued; or `{error}` when no report matches"),
    ...errorResponses([400, 401, 403, 404, 503], {
      400: "an unknown type, a bad time window or filter (the message names it)",
      404: "study not found",
      503: "the job queue is unavailable",
    }),
  },
});

export function registerReportsExport(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(countRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
    const selection = reportSelection(c.req.valid("query"));
    await getStudy(db, studyKey);
    return c.json({ count: await countReports(db, studyKey, selection) }, 200);
  });
  openapiBothSlashes(router, startRoute, async (c) => {
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
  });
}
