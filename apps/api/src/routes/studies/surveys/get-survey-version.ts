import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getSurveyVersion } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseSurveyDocumentSchema, presentCaseSurvey } from "@studyflow/presenters/case-survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { surveyVersionParams } from "./version-id-param";

export function registerGetSurveyVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{surveyKey}/versions/{versionId}",
      tags: ["surveys"],
      summary: "One version of a survey: its whole CASE Survey",
      description: "Unpublished versions too. Requires `read-study-config` or `manage-surveys`.",
      security: MANAGEMENT_SECURITY,
      request: { params: surveyVersionParams },
      responses: {
        200: jsonContent(z.object({ survey: caseSurveyDocumentSchema }), "the version's CASE Survey"),
        ...errorResponses([400, 401, 403, 404], { 404: "study, survey or version not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey, versionId } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-surveys"]);
      const version = await getSurveyVersion(db, studyKey, surveyKey, versionId);
      return c.json({ survey: presentCaseSurvey(version) }, 200);
    },
  );
}
