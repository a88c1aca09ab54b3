import { assertStudyPermission } from "@studyflow/domain/access";
import { unpublishSurvey } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { presentUnpublishedSurvey, unpublishedSurveySchema } from "@studyflow/presenters/survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../../schemas";

export function registerUnpublishSurvey(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{surveyKey}/unpublish",
      tags: ["surveys"],
      summary: "Unpublish a survey: participants can no longer fetch it",
      description:
        "Every version still published is stamped unpublished, so the survey has no current version. The versions " +
        "stay readable for researchers and responses naming them stay known; a later upload publishes the survey " +
        "again. A survey already unpublished answers 200 as well (`versionsUnpublished: 0`, nothing changes). " +
        "No body is read. Audited as `survey.unpublish`. Requires `unpublish-survey` (or `manage-surveys`); a " +
        "grant limited to `{surveyKey}` covers its survey only.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }) },
      responses: {
        200: jsonContent(unpublishedSurveySchema, "the survey is unpublished"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or survey not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "unpublish-survey", { surveyKey });
      const result = await unpublishSurvey(
        db,
        { studyKey, surveyKey, actor: who.subject, idempotent: true },
        domainContext(deps),
      );
      return c.json(presentUnpublishedSurvey(result), 200);
    },
  );
}
