import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getCurrentSurveyVersion } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseSurveyDocumentSchema, presentCaseSurvey } from "@studyflow/presenters/case-survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../../schemas";

export function registerGetCurrentSurvey(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{surveyKey}",
      tags: ["surveys"],
      summary: "A survey's current version: its whole CASE Survey",
      description:
        "The newest version not unpublished, the one participants get (case-backend's latest survey). A survey " +
        "whose versions are all unpublished, or that the study does not have, is a 404 (case-backend: 500). " +
        "Requires `read-study-config` or `manage-surveys`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam.extend({ surveyKey: surveyKeyField }),
      },
      responses: {
        200: jsonContent(z.object({ survey: caseSurveyDocumentSchema }), "the current version's CASE Survey"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or the survey has no published version" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-surveys"]);
      const version = await getCurrentSurveyVersion(db, studyKey, surveyKey);
      return c.json({ survey: presentCaseSurvey(version) }, 200);
    },
  );
}
