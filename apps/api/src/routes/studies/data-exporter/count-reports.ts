import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { countReports } from "@studyflow/domain/exports";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { exportCountResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";
import { selectionQuery, reportSelection } from "./report-selection";

const group = EXPORT_GROUPS.reports;

export function registerCountReports(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/reports/count",
      tags: ["data-exporter"],
      summary: "Count the reports an export would hold (CASE)",
      description: `Reports matching reportKey, pid, from, until and filter. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, query: z.object(selectionQuery) },
      responses: exportCountResponses("from/until not Unix seconds or from after until; filter not valid"),
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
      const selection = reportSelection(c.req.valid("query"));
      await getStudy(db, studyKey);
      return c.json({ count: await countReports(db, studyKey, selection) }, 200);
    },
  );
}
