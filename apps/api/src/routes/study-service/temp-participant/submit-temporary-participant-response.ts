import { z } from "@hono/zod-openapi";
import { SUBMITTED_BY_PARTICIPANT, submitResponse } from "@studyflow/domain/events";
import { checkInstanceId } from "../../../case-compat";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import {
  answerOnce,
  idempotencyKey,
  idempotencyKeyHeaders,
  temporaryParticipantScope,
} from "../../../middleware/idempotency";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, keyString, submittedResponseSchema } from "../../schemas";
import { instanceIdField, temporaryIdGuessLimit, temporaryParticipantIdField } from "./temporary-participant-fields";

const submitRequest = z.object({
  studyKey: keyString("studyKey"),
  instanceId: instanceIdField,
  pid: temporaryParticipantIdField(true),
  response: submittedResponseSchema,
});

/** A person fills in a form in minutes; this bounds a script, not a reporter. */
function submitLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "temp-submit",
    limit: 60,
    windowSeconds: 10 * 60,
    count: "every-request",
    message: "too many submissions from this address; try again later",
    input: { json: submitRequest },
    keys: (c) => addressKeys(c, "ip:"),
  });
}

export function registerSubmitTemporaryParticipantResponse(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  // the body reader first: it makes a text/plain body JSON, which the limits then read
  defineRoute(
    router,
    {
      caseBody: submitRequest,
      bodyDescription: "`studyKey`, `instanceId`, `pid` (the temporary participant) and `response`",
      afterBody: [
        submitLimit(limiter),
        temporaryIdGuessLimit(limiter, "temp-submit-miss", [404, 409]),
        idempotencyKey({ scope: temporaryParticipantScope }),
      ],
      method: "post",
      path: "/submit-response",
      tags: ["study-events"],
      summary: "A temporary participant submits a survey response (public, CASE)",
      description:
        "case-backend's submitTempParticipantResponse: the SUBMIT rules run for the temporary participant and the " +
        "response, its confidential items and reports are stored in one transaction, as for a signed-in " +
        "participant; a merge into a profile later takes them along. Only a participant with status `temporary`, " +
        "younger than the merge age limit, can be addressed; another participant's id answers as an unknown one. " +
        "Rule warnings are not returned to this anonymous caller (researchers see them). Rate-limited per address. " +
        "An `Idempotency-Key` makes a retry safe; keys are scoped to the temporary participant.",
      request: { headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          assignedSurveysEnvelope,
          "response stored; the temporary participant's surveys after the rules",
        ),
        ...errorResponses([400, 404, 409, 422, 429], {
          400: "invalid body, an instanceId of another instance, or a versionId the study rejects",
          404: "study or temporary participant not found",
          409: "study not active, or the temporary participant is too old",
          422: "the study's rules failed for this response; nothing was stored",
          429: "too many submissions, or unknown temporary participants, from this address",
        }),
      },
    },
    async (c) => {
      const request = c.req.valid("json");
      checkInstanceId(deps.config, request.instanceId);
      return answerOnce(
        c,
        deps,
        (ctx) =>
          submitResponse(
            db,
            {
              studyKey: request.studyKey,
              temporaryParticipantId: request.pid,
              maxAgeSeconds: deps.config.TEMP_PARTICIPANT_MAX_AGE_SECONDS,
              response: request.response,
              submittedBy: SUBMITTED_BY_PARTICIPANT,
            },
            ctx,
          ),
        (result) => ({ assignedSurveys: presentAssignedSurveys(result.participant) }),
      );
    },
  );
}
