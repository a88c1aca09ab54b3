import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listSurveyVersionDocuments } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseSurveyDocumentSchema, presentCaseSurvey } from "@studyflow/presenters/case-survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../../schemas";

export function registerListSurveyVersions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{surveyKey}/versions",
      tags: ["surveys"],
      summary: "Every version of a survey, newest first, without its items and rules",
      description:
        "As case-backend lists them: each version's CASE Survey without `surveyDefinition.items`, " +
        "`prefillRules` and `contextRules` (fetch one version for those). Requires `read-study-config` or " +
        "`manage-surveys`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }) },
      responses: {
        200: jsonContent(z.object({ versions: z.array(caseSurveyDocumentSchema) }), "the versions"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or survey not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-surveys"]);
      const versions = await listSurveyVersionDocuments(db, studyKey, surveyKey);
      return c.json({ versions: versions.map(presentCaseSurvey) }, 200);
    },
  );
}
