import { z } from "@hono/zod-openapi";
import type { DailyExportConfig } from "@studyflow/domain/exports";

export const includeMetaSchema = z.object({
  position: z.boolean().default(false),
  initTimes: z.boolean().default(false),
  displayedTimes: z.boolean().default(false),
  responsedTimes: z.boolean().default(false),
});

export const configSchema = z
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

/** A study's daily export settings as the API answers them. */
export const presentDailyExportConfig = (config: DailyExportConfig) => ({
  surveyKeys: config.surveyKeys,
  enabled: config.enabled,
  options: config.options,
  updatedBy: config.updatedBy,
  updatedAt: config.updatedAt.toISOString(),
});
