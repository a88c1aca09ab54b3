import { z } from "@hono/zod-openapi";
import { surveyInfo, type SurveyVersionInput } from "@studyflow/case-export";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import { getStudy } from "@studyflow/domain/studies";
import { getSurveyVersion, listSurveyVersions, type SurveyVersionInfo } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { attachmentHeader } from "../../download";
import { goBoolQuery } from "./case-query";

/** Unix seconds, as the export formatters take times. */
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** Which survey, in which format and language. */
const surveyInfoQuery = z.object({
  surveyKey: z
    .string()
    .optional()
    .openapi({
      description: "the survey (required)",
      example: "weekly",
      param: { name: "surveyKey", in: "query" },
    }),
  format: z
    .enum(["json", "csv"], { error: 'format must be "json" or "csv"' })
    .optional()
    .openapi({ description: "default json" }),
  language: z
    .string()
    .max(35, "language is longer than 35 characters")
    .optional()
    .openapi({ description: "language code of titles and labels (default en)", example: "de" }),
  shortKeys: goBoolQuery("shortKeys", "item keys without the survey key prefix (default false)"),
});

/** CASE's survey-info JSON. */
const surveyInfoSchema = z.object({ key: z.string(), versions: z.array(z.unknown()) }).openapi("CaseSurveyInfo");

export function registerGetSurveyInfo(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/survey-info/",
      tags: ["data-exporter"],
      summary: "A survey's codebook: every version's questions, response slots and option labels (CASE)",
      description:
        "CASE's survey-info, as an attachment named `survey-infos_<studyKey>_<surveyKey>.<csv|json>`: JSON " +
        "`{versions, key}` or CSV with one row per response slot and option. Labels in `language` (default `en`); " +
        "`shortKeys` drops the survey key prefix from item keys. Requires `read-study-config`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: surveyInfoQuery,
      },
      responses: {
        200: {
          description: "the codebook file",
          content: {
            "application/json": {
              schema: surveyInfoSchema,
            },
            "text/csv": { schema: z.string() },
          },
        },
        ...errorResponses([400, 401, 403, 404], {
          400: "surveyKey missing or not a survey of the study, format not json/csv, shortKeys not a boolean",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "read-study-config");
      const surveyKey = query.surveyKey ?? "";
      if (surveyKey === "") throw new Invalid("surveyKey is required");
      await getStudy(db, studyKey);
      let infos: SurveyVersionInfo[];
      try {
        infos = await listSurveyVersions(db, studyKey, surveyKey);
      } catch (error) {
        // The study exists: what is not found is the survey the query names, a bad query value.
        if (error instanceof NotFound) throw new Invalid(`surveyKey: no survey "${surveyKey}" in study "${studyKey}"`);
        throw error;
      }
      // A codebook covers every version; a survey has a handful, so one read per version is cheap.
      const versions: SurveyVersionInput[] = [];
      for (const info of infos) {
        const version = await getSurveyVersion(db, studyKey, surveyKey, info.versionId);
        versions.push({
          versionId: version.versionId,
          publishedAt: seconds(version.publishedAt),
          unpublishedAt: version.unpublishedAt ? seconds(version.unpublishedAt) : null,
          definition: version.definition,
        });
      }
      const file = surveyInfo(surveyKey, versions, {
        language: query.language ?? "en",
        shortKeys: query.shortKeys ?? false,
        format: query.format ?? "json",
        studyKey,
      });
      return c.body(file.text, 200, {
        "Content-Type": file.contentType,
        "Content-Disposition": attachmentHeader(file.fileName),
        "Cache-Control": "private, no-store",
      });
    },
  );
}
