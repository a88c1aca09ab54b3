import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { mergeTemporaryParticipant } from "@studyflow/domain/events";
import { participantOf } from "../../../app-env";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, studyKeyParam } from "../../schemas";

const mergeRequest = z.object({
  profileID: profileIdField,
  temporaryParticipantID: z.string().min(1, "temporaryParticipantID must not be empty").max(200),
});

/**
 * Failed merges guess at a bearer secret (the temporary id): a caller gets this many failures
 * per window, per user and per address, before being turned away. Only unknown (404) and
 * unmergeable (409) temporary participants count; a foreign profile (403) is no guess.
 */
function failedMergeLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "merge-fail",
    limit: 10,
    windowSeconds: 15 * 60,
    count: { failures: [404, 409] },
    message: "too many failed merge attempts; try again later",
    input: { params: studyKeyParam, json: mergeRequest },
    keys: (c) => [`user:${participantOf(c).userId}`, ...addressKeys(c, "ip:")],
  });
}

export function registerMergeTemporaryParticipant(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      // the body is read first (any Content-Type), so the limiter and the key see the matched JSON
      caseBody: mergeRequest,
      afterBody: [failedMergeLimit(limiter), idempotencyKey()],
      method: "post",
      path: "/{studyKey}/merge-temporary-participant",
      tags: ["study-events"],
      summary: "Merge a temporary participant into a profile's participant",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          assignedSurveysEnvelope.extend(warningsField),
          "the target participant's surveys after the merge",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422, 429], {
          400: "invalid body",
          404: "study or temporary participant not found",
          409: "study not active, participant not temporary, or too old",
          429: "too many failed merge attempts",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { userId } = participantOf(c);
      const { profileID, temporaryParticipantID } = c.req.valid("json");
      const profile = await assertProfileOfUser(db, userId, profileID);
      return answerOnce(
        c,
        deps,
        (ctx) =>
          mergeTemporaryParticipant(
            db,
            {
              studyKey,
              userId,
              profile,
              temporaryParticipantId: temporaryParticipantID,
              maxAgeSeconds: deps.config.TEMP_PARTICIPANT_MAX_AGE_SECONDS,
            },
            ctx,
          ),
        (result) => ({
          assignedSurveys: presentAssignedSurveys(result.participant),
          warnings: presentWarnings(result.warnings),
        }),
      );
    },
  );
}
