import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listDailyExports } from "@studyflow/domain/exports";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseDailyExportName } from "@studyflow/presenters/case-daily-export";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { EXPORT_GROUPS } from "./export-groups";

const group = EXPORT_GROUPS.responses;

export function registerListDailyExports(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/responses/daily-exports",
      tags: ["data-exporter"],
      summary: "The study's daily response exports (CASE)",
      description:
        "File names as case-backend lists them, `<YYYY-MM-DD>##responses##<surveyKey>##<format>.<ext>`, newest day " +
        "first; download one with …/daily-exports/{base64 of the name}. Files removed by retention are not listed. " +
        `Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(
          z.object({
            dailyExports: z.array(z.string().openapi({ example: "2026-11-25##responses##weekly##wide.csv" })),
          }),
          "the daily export files",
        ),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
      const listings = await listDailyExports(db, studyKey);
      return c.json({ dailyExports: listings.map(caseDailyExportName) }, 200);
    },
  );
}
