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
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { surveyUpload } from "./survey-upload-body";

/** POST …/surveys: a new survey, as case-admin's "create survey" sends it. */
export function registerUploadSurvey(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["surveys"],
      summary: "Create a survey: its first version, published",
      description:
        "Creates the survey named by `surveyDefinition.key` with its first version (version id YY-MM-N and " +
        "publication time from the server; a client's id, versionId, published and unpublished are dropped). " +
        "A key the study already has is a 409: new versions go to `POST …/surveys/{surveyKey}`. Answers " +
        "case-backend's `{survey}` (the stored CASE Survey) with studyflow's `version` summary beside it. " +
        "Audited as `survey.publish`. Requires `create-survey` (or `manage-surveys`).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: surveyUpload,
      responses: {
        201: jsonContent(
          z.object({ survey: caseSurveyDocumentSchema, version: surveyVersionInfoSchema }),
          "the stored version",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 413], {
          400: "not a CASE Survey: no surveyDefinition, or a missing or malformed key",
          404: "study not found",
          409: "the study already has a survey with this key",
          413: "the definition is larger than 1 MiB serialized (or the body larger than 2 MiB)",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "create-survey");
      const version = await publishSurveyVersion(
        db,
        { studyKey, actor: who.subject, survey: c.req.valid("json"), newSurvey: true },
        domainContext(deps),
      );
      return c.json({ survey: presentCaseSurvey(version), version: presentSurveyVersionInfo(version) }, 201);
    },
  );
}
