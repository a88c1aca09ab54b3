import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getDailyExportConfig } from "@studyflow/domain/exports";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { configSchema, presentDailyExportConfig } from "./daily-export-config-schema";

/** studyflow's own route: case-backend configures daily exports in its job's file, not over HTTP. */
export function registerGetDailyExportConfig(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["data-exporter"],
      summary: "The study's daily export settings",
      description:
        "Which surveys are exported every day (the previous UTC day's arrivals, one file per survey, listed under " +
        "`data-exporter/responses/daily-exports`), and with which options. `config` is null when the study never " +
        "asked for daily exports. Requires `get-responses`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ config: configSchema.nullable() }), "the settings, or null"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-responses");
      const config = await getDailyExportConfig(db, studyKey);
      return c.json({ config: config ? presentDailyExportConfig(config) : null }, 200);
    },
  );
}
