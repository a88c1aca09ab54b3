import { z } from "@hono/zod-openapi";
import { enterStudy } from "@studyflow/domain/events";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { assignedSurveysEnvelope, presentAssignedSurveys } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import { eventProfile, profileEventBody } from "./profile-event";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerEnterStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: profileEventBody,
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/{studyKey}/enter",
      tags: ["study-events"],
      summary: "A profile enters a study (or re-enters after leaving)",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          assignedSurveysEnvelope.extend({ created: z.boolean(), ...warningsField }),
          "the participant's surveys",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          400: "invalid body",
          404: "study not found",
          409: "study not active",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { userId, profile } = await eventProfile(db, c, c.req.valid("json").profileID);
      return answerOnce(
        c,
        deps,
        (ctx) => enterStudy(db, { studyKey, userId, profile }, ctx),
        (result) => ({
          assignedSurveys: presentAssignedSurveys(result.participant),
          created: result.created,
          warnings: presentWarnings(result.warnings),
        }),
      );
    },
  );
}
