import { z } from "@hono/zod-openapi";
import { assertProfilesOfUser, listAssignedSurveysOfProfiles } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import {
  caseAssignedSurveySchema,
  caseSurveyInfoSchema,
  presentCaseAssignedSurvey,
  presentCaseSurveyInfo,
} from "./present";
import { FORBIDDEN_PROFILE, pidsQuery, studyParams } from "./profile-query";

export function registerListSurveys(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/surveys",
      tags: ["participant-data"],
      summary: "The surveys assigned to some of the user's profiles (CASE)",
      description:
        "The surveys assigned to each profile of `pids` that is an active participant of the study (others add " +
        "nothing), each with its profile, and `surveyInfos`: name, description and typical duration of each " +
        "survey's current version (every language the definition has; the app picks). Every profile must be the " +
        "user's, else 403 and nothing is read.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyParams, query: pidsQuery },
      responses: {
        200: jsonContent(
          z.object({ surveys: z.array(caseAssignedSurveySchema), surveyInfos: z.array(caseSurveyInfoSchema) }),
          "the assigned surveys",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "pids missing or not valid",
          403: FORBIDDEN_PROFILE,
          404: "study not found",
          409: "study not active",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const profileIds = await assertProfilesOfUser(db, participantOf(c).userId, c.req.valid("query").pids);
      const assigned = await listAssignedSurveysOfProfiles(db, studyKey, profileIds);
      return c.json(
        {
          surveys: assigned.surveys.map(presentCaseAssignedSurvey),
          surveyInfos: assigned.surveyInfos.map((info) => presentCaseSurveyInfo(studyKey, info)),
        },
        200,
      );
    },
  );
}
