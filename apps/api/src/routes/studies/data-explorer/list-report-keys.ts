import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listReportKeys } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { studyKeyField } from "./explorer-query";
import { reportConditions, reportConditionsQuery } from "./report-query";

export function registerListReportKeys(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/reports/keys",
      tags: ["data-explorer"],
      summary: "The report keys the study's reports use",
      description:
        "Distinct keys, sorted, of the reports of `pid` between `from` and `until` (each optional; 0 means no bound, as in " +
        "case-backend). Requires `get-reports`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField }), query: reportConditionsQuery },
      responses: {
        200: jsonContent(z.object({ reportKeys: z.array(z.string()) }), "the keys"),
        ...errorResponses([400, 401, 403, 404], { 400: "from or until not Unix seconds", 404: "study not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-reports");
      const reportKeys = await listReportKeys(db, studyKey, reportConditions(c.req.valid("query")));
      return c.json({ reportKeys }, 200);
    },
  );
}
