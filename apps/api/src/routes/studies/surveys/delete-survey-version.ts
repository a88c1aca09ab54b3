import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteSurveyVersion } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { surveyVersionParams } from "./version-id-param";

export function registerDeleteSurveyVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{surveyKey}/versions/{versionId}",
      tags: ["surveys"],
      summary: "Delete one version of a survey",
      description:
        "Deleting the current version makes the newest remaining published one current. A version that stored " +
        "responses name is kept (409): exports and the data explorer read those responses' questions from it. " +
        "Its version id is never given to a later upload. Audited as `survey.version.delete`. Requires " +
        "`delete-survey-version` (or `manage-surveys`); a grant limited to `{surveyKey}` covers its survey only.",
      security: MANAGEMENT_SECURITY,
      request: { params: surveyVersionParams },
      responses: {
        200: jsonContent(
          z.object({
            message: z.string().openapi({ example: "survey version deleted" }),
            currentVersionId: z
              .string()
              .nullable()
              .openapi({ description: "the survey's current version now; null when it has none" }),
          }),
          "the version is deleted",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          404: "study, survey or version not found",
          409: "stored responses name the version",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, surveyKey, versionId } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "delete-survey-version", { surveyKey });
      const deleted = await deleteSurveyVersion(
        db,
        { studyKey, surveyKey, versionId, actor: who.subject },
        domainContext(deps),
      );
      return c.json({ message: "survey version deleted", currentVersionId: deleted.currentVersionId }, 200);
    },
  );
}
