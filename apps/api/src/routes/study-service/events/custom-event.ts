import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { raiseCustomEvent } from "@studyflow/domain/events";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, studyKeyParam } from "../../schemas";

const customEventRequest = z.object({
  profileID: profileIdField,
  eventKey: z
    .string({ error: "eventKey must be a string" })
    .min(1, "eventKey must not be empty")
    .max(200, "eventKey is longer than 200 characters")
    .openapi({ example: "KIT_ORDERED" }),
  payload: z
    .record(z.string(), z.unknown(), { error: "payload must be a JSON object" })
    .optional()
    .openapi({
      description: "read by the rules (getEventPayloadValueAsStr, getEventPayloadValueAsNum…); default {}",
      example: { kitType: "saliva", quantity: 1 },
    }),
});

export function registerCustomEvent(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: customEventRequest,
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/{studyKey}/custom",
      tags: ["study-events"],
      summary: "A profile's participant raises a CUSTOM event",
      description:
        "The study's rules run with a CUSTOM event carrying `eventKey` (tested with checkEventKey) and `payload`, " +
        "and the resulting state is saved. The participant must be active.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(assignedSurveysEnvelope.extend(warningsField), "the surveys after the rules"),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body: eventKey missing or empty, payload not an object",
          403: "the profile is not the signed-in user's",
          404: "study not found, or the profile is not a participant of it",
          409: "study or participant not active",
          422: "the study's rules failed for this event; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { userId } = participantOf(c);
      const { profileID, eventKey, payload } = c.req.valid("json");
      const profile = await assertProfileOfUser(db, userId, profileID);
      return answerOnce(
        c,
        deps,
        (ctx) => raiseCustomEvent(db, { studyKey, profileId: profile.id, eventKey, payload: payload ?? {} }, ctx),
        (result) => ({
          assignedSurveys: presentAssignedSurveys(result.participant),
          warnings: presentWarnings(result.warnings),
        }),
      );
    },
  );
}
