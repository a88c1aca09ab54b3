import { leaveStudy } from "@studyflow/domain/events";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import { eventProfile, profileEventBody } from "./profile-event";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerLeaveStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: profileEventBody,
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/{studyKey}/leave",
      tags: ["study-events"],
      summary: "A profile leaves a study",
      description: "Status becomes `exited`, then the LEAVE rules run; confidential responses are removed.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(assignedSurveysEnvelope.extend(warningsField), "the surveys after the LEAVE rules"),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body",
          404: "study or participant not found",
          409: "study or participant not active",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { profile } = await eventProfile(db, c, c.req.valid("json").profileID);
      return answerOnce(
        c,
        deps,
        (ctx) => leaveStudy(db, { studyKey, profileId: profile.id }, ctx),
        (result) => ({
          assignedSurveys: presentAssignedSurveys(result.participant),
          warnings: presentWarnings(result.warnings),
        }),
      );
    },
  );
}
