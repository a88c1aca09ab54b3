import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { getAssignedSurveyVersion } from "@studyflow/domain/participants";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseSurveySchema, presentSurveyDocument } from "@studyflow/presenters/survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdQuery, studyKeyParam, surveyKeyField } from "../../schemas";

export function registerGetAssignedSurvey(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "get",
      path: "/studies/{studyKey}/surveys/{surveyKey}",
      tags: ["participant"],
      summary: "The current version of a survey assigned to the profile's participant",
      description:
        "Only a survey assigned to the participant and valid now (validFrom ≤ now ≤ validUntil, 0 = open) is " +
        "given out; its current published version, as a CASE Survey with the server's versionId, which the " +
        "response then names.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }), query: profileIdQuery },
      responses: {
        200: jsonContent(z.object({ survey: caseSurveySchema }), "the survey to fill in"),
        ...errorResponses([400, 401, 403, 404], {
          400: "profileID missing",
          403: "the profile is not the signed-in user's, or the survey is not assigned to it or not valid now",
          404: "study not found, the profile is not a participant of it, or the survey has no published version",
        }),
      },
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").profileID);
      const version = await getAssignedSurveyVersion(db, {
        studyKey,
        profileId: profile.id,
        surveyKey,
        nowSeconds: Math.floor(clock() / 1000),
      });
      return c.json({ survey: presentSurveyDocument(version) }, 200);
    },
  );
}
