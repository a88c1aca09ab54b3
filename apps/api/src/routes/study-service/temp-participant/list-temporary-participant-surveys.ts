import { z } from "@hono/zod-openapi";
import { listAssignedSurveysOfTemporaryParticipant } from "@studyflow/domain/participant-data";
import { checkInstanceId } from "../../../case-compat";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, keyString } from "../../schemas";
import {
  caseAssignedSurveySchema,
  caseSurveyInfoSchema,
  presentCaseAssignedSurvey,
  presentCaseSurveyInfo,
} from "../participant-data/present";
import { instanceIdField, temporaryIdGuessLimit, temporaryParticipantIdField } from "./temporary-participant-fields";

const query = z.object({
  instanceID: instanceIdField.openapi({ param: { name: "instanceID", in: "query" } }),
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "query" } }),
  pid: temporaryParticipantIdField(true).openapi({ param: { name: "pid", in: "query" } }),
});

/** Each look at the anonymous participant's to-do list is one read; this bounds a client that loops. */
function readLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "temp-surveys",
    limit: 300,
    windowSeconds: 10 * 60,
    count: "every-request",
    message: "too many survey requests from this address; try again later",
    keys: (c) => addressKeys(c, "ip:"),
  });
}

export function registerListTemporaryParticipantSurveys(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      middleware: [readLimit(limiter), temporaryIdGuessLimit(limiter, "temp-surveys-miss", [404])],
      method: "get",
      path: "/surveys",
      tags: ["study-events"],
      summary: "The surveys assigned to a temporary participant (public, CASE)",
      description:
        "case-backend's getTempParticipantSurveys: `{surveys, surveyInfos}` as the signed-in " +
        "participant-data `surveys` answers them, for the temporary participant `pid` (its id from register, its " +
        "only credential). An assignment's `profileID` is empty (a temporary participant has no profile) and its " +
        "`studyKey` is the study's (case-backend answers the stored key, empty for assignments its rules made). An " +
        "unknown id and a participant that is no longer temporary are both 404 (case-backend: 500); wrong ids count " +
        "per address.",
      request: { query },
      responses: {
        200: jsonContent(
          z.object({ surveys: z.array(caseAssignedSurveySchema), surveyInfos: z.array(caseSurveyInfoSchema) }),
          "the assigned surveys",
        ),
        ...errorResponses([400, 404, 409, 429], {
          400: "studyKey or pid missing, or an instanceID of another instance",
          404: "study or temporary participant not found",
          409: "study not active",
          429: "too many requests from this address",
        }),
      },
    },
    async (c) => {
      const { instanceID, studyKey, pid } = c.req.valid("query");
      checkInstanceId(deps.config, instanceID);
      const assigned = await listAssignedSurveysOfTemporaryParticipant(db, studyKey, pid);
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
