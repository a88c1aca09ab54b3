import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { mergeVirtualParticipant } from "@studyflow/domain/events";
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

const required = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, "missing required fields")
    .max(200);

/** case-backend's MergeVirtualParticipantRequest. */
const mergeVirtualRequest = z.object({
  profileID: profileIdField,
  virtualParticipantID: required("virtualParticipantID"),
  linkingCodeKey: required("linkingCodeKey"),
  linkingCodeValue: required("linkingCodeValue"),
});

/**
 * A failed claim guesses at a virtual participant's id and linking code: a caller gets this many
 * failures per window, per user and per address. Only 404s count; a foreign profile (403) is no guess.
 */
function failedClaimLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "merge-virtual-fail",
    limit: 10,
    windowSeconds: 15 * 60,
    count: { failures: [404] },
    message: "too many failed merge attempts; try again later",
    input: { params: studyKeyParam, json: mergeVirtualRequest },
    keys: (c) => [`user:${participantOf(c).userId}`, ...addressKeys(c, "ip:")],
  });
}

export function registerMergeVirtualParticipant(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: mergeVirtualRequest,
      afterBody: [failedClaimLimit(limiter), idempotencyKey()],
      method: "post",
      path: "/{studyKey}/merge-virtual-participant",
      tags: ["study-events"],
      summary: "Claim a virtual participant for a profile, by its linking code",
      description:
        "The virtual participant must hold the linking code sent (`linkingCodeKey` = `linkingCodeValue`). The " +
        "profile's participant (entered first when it is new) takes its state through the MERGE rules, and its " +
        "responses, reports and confidential responses; the virtual participant is deleted. An unknown id, a " +
        "participant that is not virtual and a wrong code answer the same 404, and failed claims are limited per " +
        "user and address (10 in 15 minutes).",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          assignedSurveysEnvelope.extend(warningsField),
          "the profile participant's surveys after the merge",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422, 429], {
          400: "invalid body: a field missing or empty",
          403: "the profile is not the signed-in user's",
          404: "study not found, or no virtual participant with this id holds this linking code",
          409: "study not active",
          429: "too many failed merge attempts",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { userId } = participantOf(c);
      const body = c.req.valid("json");
      const profile = await assertProfileOfUser(db, userId, body.profileID);
      return answerOnce(
        c,
        deps,
        (ctx) =>
          mergeVirtualParticipant(
            db,
            {
              studyKey,
              userId,
              profile,
              virtualParticipantId: body.virtualParticipantID,
              linkingCodeKey: body.linkingCodeKey,
              linkingCodeValue: body.linkingCodeValue,
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
