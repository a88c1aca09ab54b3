import { z } from "@hono/zod-openapi";
import { DEFAULT_QUESTION_OPTION_SEP } from "@studyflow/case-export";
import { assertStudyPermission } from "@studyflow/domain/access";
import { setDailyExportConfig } from "@studyflow/domain/exports";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../../schemas";
import { configSchema, includeMetaSchema, presentDailyExportConfig } from "./daily-export-config-schema";

/** The body: what a researcher chooses; every option has CASE's export default. */
const bodySchema = z.object({
  surveyKeys: z.array(z.string()).openapi({ description: "surveys to export every day (each must be uploaded)" }),
  enabled: z.boolean().default(true),
  format: z.enum(["wide", "long", "json"], { error: 'format must be "wide", "long" or "json"' }).default("wide"),
  questionOptionSep: z.string().default(DEFAULT_QUESTION_OPTION_SEP),
  shortKeys: z.boolean().default(false),
  extraContextColumns: z.array(z.string()).default([]),
  includeMeta: includeMetaSchema.default({
    position: false,
    initTimes: false,
    displayedTimes: false,
    responsedTimes: false,
  }),
  gzip: z.boolean().default(false),
  guardFormulas: z
    .boolean()
    .default(true)
    .openapi({
      description:
        "studyflow's addition: CSV cells participants filled that start with =, +, -, @, tab or CR (and are no " +
        "plain number) get a ' in front; default true, false writes case-backend's exact bytes",
    }),
});

/** studyflow's own route: case-backend configures daily exports in its job's file, not over HTTP. */
export function registerSetDailyExportConfig(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/",
      tags: ["data-exporter"],
      summary: "Ask for (or stop) a daily export of chosen surveys",
      description:
        "One cluster-wide schedule exports, once per study, survey and day, the previous UTC day's responses of " +
        "each chosen survey in the chosen format (CASE's export options and defaults). `enabled: false` keeps the " +
        "settings and stops the exports. The change is audited (`daily-export.update`). Requires `get-responses`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, body: jsonBody(bodySchema) },
      responses: {
        200: jsonContent(z.object({ config: configSchema }), "the stored settings"),
        ...errorResponses([400, 401, 403, 404], {
          400: "a bad option, or a survey the study has no version of (the message names it)",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "get-responses");
      const { surveyKeys, enabled, ...options } = c.req.valid("json");
      const config = await setDailyExportConfig(db, studyKey, { surveyKeys, enabled, options }, who.subject, deps);
      return c.json({ config: presentDailyExportConfig(config) }, 200);
    },
  );
}
