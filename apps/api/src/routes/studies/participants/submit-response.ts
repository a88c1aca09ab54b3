import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { submitResponse } from "@studyflow/domain/events";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import {
  assignedSurveySchema,
  participantSchema,
  presentAssignedSurveys,
  presentParticipant,
} from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, submittedResponseSchema } from "../../schemas";
import { participantParams } from "./participant-params";

export function registerSubmitResponse(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      middleware: [idempotencyKey()],
      method: "post",
      path: "/{participantID}/responses",
      tags: ["participants"],
      summary: "Submit a survey response on behalf of a participant",
      description:
        "Runs the study's rules with a SUBMIT event and stores the response, its confidential items, reports and " +
        "messages in one transaction. A non-empty `versionId` must name an uploaded version of the survey: a study " +
        "set to reject unknown versions answers 400, otherwise the response is stored and the mismatch recorded " +
        "as a rule failure (ruleIndex -1, path `response.versionId`) and returned among the warnings. Recorded " +
        "with `context.submittedBy` set to the caller's subject. Requires the `edit-participant-data` permission.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: participantParams,
        headers: idempotencyKeyHeaders,
        body: jsonBody(submittedResponseSchema),
      },
      responses: {
        200: jsonContent(
          z.object({
            message: z.string(),
            result: z.array(assignedSurveySchema),
            participant: participantSchema,
            ...warningsField,
          }),
          "response stored; the participant's surveys and state after the rules",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body, or a versionId the study rejects",
          404: "study or participant not found",
          409: "study not active, or participant takes no responses",
          422: "the study's rules failed for this response; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(deps.database.db, who, studyKey, "edit-participant-data");
      const response = c.req.valid("json");
      return answerOnce(
        c,
        deps,
        (ctx) =>
          submitResponse(
            deps.database.db,
            { studyKey, participantId: participantID, response, submittedBy: who.subject },
            ctx,
          ),
        (outcome) => ({
          message: "response submitted",
          result: presentAssignedSurveys(outcome.participant),
          participant: presentParticipant(outcome.participant),
          warnings: presentWarnings(outcome.warnings),
        }),
      );
    },
  );
}
