import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listExplorerReports, type ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import { casePaginationSchema } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { LIST_DESCRIPTION, explorerListQuery, paginationOf, studyKeyField, toExplorerQuery } from "./explorer-query";
import { caseReportSchema, presentCaseReport } from "./present";
import { reportConditions, reportConditionsQuery } from "./report-query";

export function registerListReports(router: ApiRouter, deps: AppDeps, cache: ExplorerPageCache) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/reports",
      tags: ["data-explorer"],
      summary: "A page of the study's reports, newest first",
      description:
        "Reports that `filter` selects (fields key, participantID, responseID, timestamp, data.key, data.value), narrowed " +
        "by `reportKey`, `pid`, `from` and `until`, each of which replaces the filter's condition on its field, as in " +
        "case-backend. Newest first; `sort` is ignored, as case-backend ignores it. " +
        LIST_DESCRIPTION +
        " Requires `get-reports`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField }),
        query: explorerListQuery.extend(reportConditionsQuery.shape).extend({
          reportKey: z.string().max(200, "reportKey is longer than 200 characters").optional(),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ reports: z.array(caseReportSchema), pagination: casePaginationSchema }),
          "a page of reports",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "page, limit, filter, from or until not valid",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-reports");
      const { sort: _ignored, ...explorerQuery } = toExplorerQuery(query);
      const page = await listExplorerReports(
        db,
        studyKey,
        explorerQuery,
        { ...reportConditions(query), ...(query.reportKey ? { reportKey: query.reportKey } : {}) },
        cache,
      );
      return c.json({ reports: page.rows.map(presentCaseReport), pagination: paginationOf(page) }, 200);
    },
  );
}
