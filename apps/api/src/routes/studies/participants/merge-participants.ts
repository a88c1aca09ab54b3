import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { forceMergeParticipants } from "@studyflow/domain/events";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { answerOnce, idempotencyKey, idempotencyKeyHeaders } from "../../../middleware/idempotency";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { studyKeyField } from "./participant-params";

const participantId = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, `${name} is required`)
    .max(200);

/** case-backend's MergeParticipantsRequest. */
const mergeRequest = z.object({
  targetParticipantID: participantId("targetParticipantID"),
  withParticipantID: participantId("withParticipantID"),
});

export function registerMergeParticipants(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: mergeRequest,
      afterBody: [idempotencyKey()],
      method: "post",
      path: "/merge",
      tags: ["participants"],
      summary: "Merge one participant into another",
      description:
        "`withParticipantID` is merged into `targetParticipantID` whatever their statuses: the MERGE rules run on " +
        "the target with the other's state, submissions merge, its responses, reports, confidential responses and " +
        "researcher messages move to the target, and it is deleted, as when a temporary participant is merged. " +
        "Answers the target as stored. Audited (`participants.merge`). An unknown participant is a 404 " +
        "(case-backend: 500). Requires `merge-participants`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField }), headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(z.object({ participant: participantSchema, ...warningsField }), "the merged participant"),
        ...errorResponses([400, 401, 403, 404, 422], {
          400: "invalid body, or the same participant twice",
          404: "study or either participant not found",
          422: "the study's rules failed for the merge; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "merge-participants");
      const { targetParticipantID, withParticipantID } = c.req.valid("json");
      return answerOnce(
        c,
        deps,
        (ctx) =>
          forceMergeParticipants(
            db,
            {
              studyKey,
              targetParticipantId: targetParticipantID,
              withParticipantId: withParticipantID,
              actor: who.subject,
            },
            ctx,
          ),
        (outcome) => ({
          participant: presentParticipant(outcome.participant),
          warnings: presentWarnings(outcome.warnings),
        }),
      );
    },
  );
}
