import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { registerVirtualParticipant } from "@studyflow/domain/events";
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

export function registerCreateVirtualParticipant(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      middleware: [idempotencyKey()],
      method: "post",
      path: "/virtual",
      tags: ["participants"],
      summary: "Create a virtual participant",
      description:
        "A participant with status `virtual` and no account: researchers enter its data (responses, events, " +
        "linking codes through the rules) until a signed-in profile claims it with a linking code " +
        "(`POST /v1/study-service/events/{studyKey}/merge-virtual-participant`). Its id derives from a random " +
        "profile id as case-backend derives it; the ENTER rules run for it. No body is read. Audited " +
        "(`participant.create-virtual`). Requires `create-virtual-participant`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField }), headers: idempotencyKeyHeaders },
      responses: {
        200: jsonContent(
          z.object({ message: z.string(), participant: participantSchema, ...warningsField }),
          "the virtual participant, after the ENTER rules",
        ),
        ...errorResponses([400, 401, 403, 404, 409, 422], {
          404: "study not found",
          409: "study not active",
          422: "the study's rules failed on entering; nothing was stored",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "create-virtual-participant");
      return answerOnce(
        c,
        deps,
        (ctx) => registerVirtualParticipant(db, { studyKey, actor: who.subject }, ctx),
        (outcome) => ({
          message: "virtual participant created",
          participant: presentParticipant(outcome.participant),
          warnings: presentWarnings(outcome.warnings),
        }),
      );
    },
  );
}
