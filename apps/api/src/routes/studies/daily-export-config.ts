import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_QUESTION_OPTION_SEP } from "@studyflow/case-export";
import {
  assertStudyPermission,
  getDailyExportConfig,
  setDailyExportConfig,
  type DailyExportConfig,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../schemas";

const PATH = "/{studyKey}/daily-export-config";

const includeMetaSchema = z.object({
  position: z.boolean().default(false),
  initTimes: z.boolean().default(false),
  displayedTimes: z.boolean().default(false),
  responsedTimes: z.boolean().default(false),
});

const configSchema = z
  .object({
    surveyKeys: z.array(z.string()).openapi({ description: "the surveys exported every day, one file each" }),
    enabled: z.boolean(),
    options: z.object({
      format: z.enum(["wide", "long", "json"]),
      questionOptionSep: z.string(),
      shortKeys: z.boolean(),
      extraContextColumns: z.array(z.string()),
      includeMeta: includeMetaSchema,
      gzip: z.boolean(),
      guardFormulas: z.boolean().openapi({
        description: "CSV cells participants filled guarded against spreadsheet formulas (false: CASE's bytes)",
      }),
    }),
    updatedBy: z.string(),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("DailyExportConfig");

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

const present = (config: DailyExportConfig) => ({
  surveyKeys: config.surveyKeys,
  enabled: config.enabled,
  options: config.options,
  updatedBy: config.updatedBy,
  updatedAt: config.updatedAt.toISOString(),
});

const getRoute = createRoute({
  method: "get",
  path: PATH,
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
});

const putRoute = createRoute({
  method: "put",
  path: PATH,
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
});

/** studyflow's own route: case-backend configures daily exports in its job's file, not over HTTP. */
export function registerDailyExportConfig(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(getRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "get-responses");
    const config = await getDailyExportConfig(db, studyKey);
    return c.json({ config: config ? present(config) : null }, 200);
  });
  router.openapi(putRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "get-responses");
    const { surveyKeys, enabled, ...options } = c.req.valid("json");
    const config = await setDailyExportConfig(db, studyKey, { surveyKeys, enabled, options }, who.subject);
    return c.json({ config: present(config) }, 200);
  });
}
