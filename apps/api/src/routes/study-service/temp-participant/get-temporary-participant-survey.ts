import { z } from "@hono/zod-openapi";
import { getSurveyWithContextForTemporaryParticipant } from "@studyflow/domain/survey-context";
import { loggerOf } from "../../../app-env";
import { checkInstanceId } from "../../../case-compat";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { presentSurveyWithContext, surveyWithContextEnvelope } from "@studyflow/presenters/survey-with-context";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, keyString } from "../../schemas";
import { instanceIdField, temporaryIdGuessLimit, temporaryParticipantIdField } from "./temporary-participant-fields";

const query = z.object({
  instanceID: instanceIdField.openapi({ param: { name: "instanceID", in: "query" } }),
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "query" } }),
  surveyKey: keyString("surveyKey").openapi({ param: { name: "surveyKey", in: "query" } }),
  pid: temporaryParticipantIdField(false)
    .optional()
    .openapi({ param: { name: "pid", in: "query" } }),
});

/** Each open of the anonymous report form is one read; this bounds a client that loops. */
function readLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "temp-survey",
    limit: 300,
    windowSeconds: 10 * 60,
    count: "every-request",
    message: "too many survey requests from this address; try again later",
    keys: (c) => addressKeys(c, "ip:"),
  });
}

export function registerGetTemporaryParticipantSurvey(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      middleware: [readLimit(limiter), temporaryIdGuessLimit(limiter, "temp-survey-miss", [404])],
      method: "get",
      path: "/survey",
      tags: ["study-events"],
      summary: "A survey with its context and prefill, for a temporary participant or anyone (public, CASE)",
      description:
        "case-backend's getTempParticipantSurveyWithContext. With `pid` (a temporary participant's id): a survey " +
        "`availableFor` `temporary_participants` or `public`, with the participant's context and prefill. Without: " +
        "a `public` survey only, with no context and no prefill from earlier responses. The answer is the " +
        "`{surveyWithContext}` of the signed-in route. Reads only; rate-limited per address.",
      request: { query },
      responses: {
        200: jsonContent(surveyWithContextEnvelope, "the survey with its context and prefill"),
        ...errorResponses([400, 403, 404, 409, 429], {
          400: "studyKey or surveyKey missing, or an instanceID of another instance",
          403: "the survey is not available this way (not public, or not for temporary participants)",
          404: "study, published survey version or temporary participant not found",
          409: "study not active",
          429: "too many requests from this address",
        }),
      },
    },
    async (c) => {
      const { instanceID, studyKey, surveyKey, pid = "" } = c.req.valid("query");
      checkInstanceId(deps.config, instanceID);
      const result = await getSurveyWithContextForTemporaryParticipant(
        db,
        { studyKey, surveyKey, temporaryParticipantId: pid },
        domainContext(deps),
      );
      if (result.problems.length > 0) {
        loggerOf(c).warn({ studyKey, surveyKey, problems: result.problems }, "survey context or prefill rules skipped");
      }
      return c.json(presentSurveyWithContext(result), 200);
    },
  );
}
