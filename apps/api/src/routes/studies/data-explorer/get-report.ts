import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getExplorerReport } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";
import { caseReportSchema, presentCaseReport } from "./present";

export function registerGetReport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/reports/{reportID}",
      tags: ["data-explorer"],
      summary: "One report",
      description: "Requires `get-reports`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField, reportID: idParam("reportID") }) },
      responses: {
        200: jsonContent(z.object({ report: caseReportSchema }), "the report"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or no such report in it" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, reportID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-reports");
      return c.json({ report: presentCaseReport(await getExplorerReport(db, studyKey, reportID)) }, 200);
    },
  );
}
