import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { raiseCustomEvent } from "@studyflow/domain/events";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { assignedSurveySchema, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { participantParams } from "./participant-params";

/** case-backend's ParticipantEventRequest. */
const participantEventRequest = z.object({
  eventKey: z
    .string({ error: "eventKey must be a string" })
    .min(1, "eventKey must not be empty")
    .max(200, "eventKey is longer than 200 characters")
    .openapi({ example: "KIT_SENT" }),
  payload: z
    .record(z.string(), z.unknown(), { error: "payload must be a JSON object" })
    .nullish()
    .openapi({ description: "read by the rules (getEventPayloadValueAsStr, …); default {}" }),
});

export function registerParticipantEvent(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: participantEventRequest,
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/{participantID}/events",
      tags: ["participants"],
      summary: "Raise a CUSTOM event for a participant",
      description:
        "The study's rules run on the participant with a CUSTOM event carrying `eventKey` and `payload`, and the " +
        "resulting state, reports and messages are saved, as when the participant raises the event itself. Any " +
        "status but `accountDeleted` (409) takes events, virtual participants among them. Requires " +
        "`edit-participant-data`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          z.object({ message: z.string(), result: z.array(assignedSurveySchema), ...warningsField }),
          "event run; the participant's surveys after the rules",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body: eventKey missing or empty, payload not an object",
          404: "study or participant not found",
          409: "study not active, or the participant's account was deleted",
          422: "the study's rules failed for this event; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "edit-participant-data");
      const { eventKey, payload } = c.req.valid("json");
      return answerOnce(
        c,
        deps,
        (ctx) =>
          raiseCustomEvent(db, { studyKey, participantId: participantID, eventKey, payload: payload ?? {} }, ctx),
        (outcome) => ({
          message: "event submitted",
          result: presentAssignedSurveys(outcome.participant),
          warnings: presentWarnings(outcome.warnings),
        }),
      );
    },
  );
}
