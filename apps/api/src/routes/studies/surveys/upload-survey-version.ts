import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { caseSurveyDocumentSchema, presentCaseSurvey } from "@studyflow/presenters/case-survey";
import { presentSurveyVersionInfo, surveyVersionInfoSchema } from "@studyflow/presenters/survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../../schemas";
import { surveyUpload } from "./survey-upload-body";

/** POST …/surveys/{surveyKey}: a new version of a survey, as case-admin's survey upload sends it. */
export function registerUploadSurveyVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{surveyKey}",
      tags: ["surveys"],
      summary: "Upload a survey definition as the survey's new, published version",
      description:
        "Stores the upload as the next version of the survey (also its first: the survey need not exist yet), " +
        "with a version id (YY-MM-N) and publication time from the server; it becomes the version participants " +
        "get, also after the survey was unpublished. `surveyDefinition.key` must be the path's survey key. " +
        "Audited as `survey.publish`. Requires `update-survey` (or `manage-surveys`); a grant limited to " +
        "`{surveyKey}` covers its survey only.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }) },
      caseBody: surveyUpload,
      responses: {
        200: jsonContent(
          z.object({ survey: caseSurveyDocumentSchema, version: surveyVersionInfoSchema }),
          "the stored version",
        ),
        ...errorResponses([400, 401, 403, 404, 413], {
          400: "not a CASE Survey, or surveyDefinition.key is not the path's survey key",
          404: "study not found",
          413: "the definition is larger than 1 MiB serialized (or the body larger than 2 MiB)",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-survey", { surveyKey });
      const version = await publishSurveyVersion(
        db,
        { studyKey, actor: who.subject, survey: c.req.valid("json"), surveyKey },
        domainContext(deps),
      );
      return c.json({ survey: presentCaseSurvey(version), version: presentSurveyVersionInfo(version) }, 200);
    },
  );
}
