import { z } from "@hono/zod-openapi";
import { assertProfilesOfUser, listSubmissionHistory } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { caseSubmissionSchema, caseSurveyInfoSchema, presentCaseSubmission, presentCaseSurveyInfo } from "./present";
import { FORBIDDEN_PROFILE, pidsQuery, studyParams } from "./profile-query";

/** case-backend's default number of submissions per profile. */
const DEFAULT_LIMIT = 100;
/** Most submissions per profile one request reads; the dashboard asks for a few. */
const MAX_LIMIT = 1_000;

export function registerSubmissionHistory(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/submission-history",
      tags: ["participant-data"],
      summary: "The latest submissions of some of the user's profiles (CASE)",
      description:
        "For each profile of `pids` that is an active participant of the study, its latest `limit` submissions " +
        `(default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}), newest first, profile after profile; with the survey infos ` +
        "(name, description, typical duration) of the version each survey's first listed submission answered. Every " +
        "profile must be the user's, else 403 and nothing is read.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyParams,
        query: pidsQuery.extend({
          limit: z
            .string()
            .regex(/^[+-]?\d{1,9}$/, "limit must be a whole number")
            .optional()
            .transform((raw) => {
              const limit = raw === undefined ? DEFAULT_LIMIT : Number(raw);
              return limit < 1 ? DEFAULT_LIMIT : Math.min(limit, MAX_LIMIT);
            })
            .openapi({ type: "integer", param: { name: "limit", in: "query" } }),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({
            submissionHistory: z.object({
              submissions: z.array(caseSubmissionSchema),
              surveyInfos: z.array(caseSurveyInfoSchema),
            }),
          }),
          "the submissions",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "pids missing or not valid; limit not a whole number",
          403: FORBIDDEN_PROFILE,
          404: "study not found",
          409: "study not active",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const profileIds = await assertProfilesOfUser(db, participantOf(c).userId, query.pids);
      const history = await listSubmissionHistory(db, studyKey, profileIds, query.limit);
      return c.json(
        {
          submissionHistory: {
            submissions: history.submissions.map(presentCaseSubmission),
            surveyInfos: history.surveyInfos.map((info) => presentCaseSurveyInfo(studyKey, info)),
          },
        },
        200,
      );
    },
  );
}
