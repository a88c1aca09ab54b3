import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { SUBMITTED_BY_PARTICIPANT, submitResponse } from "@studyflow/domain/events";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import {
  PARTICIPANT_SECURITY,
  jsonContent,
  profileIdField,
  studyKeyParam,
  submittedResponseSchema,
} from "../../schemas";

export function registerSubmitResponse(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: z.object({ profileID: profileIdField, response: submittedResponseSchema }),
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/{studyKey}/submit",
      tags: ["study-events"],
      summary: "A profile's participant submits a survey response",
      description:
        "The SUBMIT rules run and the response, its confidential items, reports and messages are stored in one " +
        "transaction, as for a researcher's submission. The participant must be active. A non-empty `versionId` " +
        "must name an uploaded version of the survey: a study set to reject unknown versions answers 400, otherwise " +
        'the response is stored and the mismatch recorded and returned among the warnings. `context.submittedBy` is "' +
        SUBMITTED_BY_PARTICIPANT +
        '" (no account or profile id, which would link the pseudonymous response to the person).',
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(assignedSurveysEnvelope.extend(warningsField), "response stored; the surveys after the rules"),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body, or a versionId the study rejects",
          403: "the profile is not the signed-in user's",
          404: "study not found, or the profile is not a participant of it",
          409: "study or participant not active",
          422: "the study's rules failed for this response; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { userId } = participantOf(c);
      const { profileID, response } = c.req.valid("json");
      const profile = await assertProfileOfUser(db, userId, profileID);
      return answerOnce(
        c,
        deps,
        (ctx) =>
          submitResponse(db, { studyKey, profileId: profile.id, response, submittedBy: SUBMITTED_BY_PARTICIPANT }, ctx),
        (result) => ({
          assignedSurveys: presentAssignedSurveys(result.participant),
          warnings: presentWarnings(result.warnings),
        }),
      );
    },
  );
}
