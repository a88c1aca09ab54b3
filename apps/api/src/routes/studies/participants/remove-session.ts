import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { nowSeconds } from "@studyflow/domain/foundation";
import { removeStudySession } from "@studyflow/domain/participants";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { participantParams } from "./participant-params";

/** case-backend's RemoveStudySessionRequest. */
const removeSessionRequest = z.object({
  sessionToRemove: z
    .string({ error: "sessionToRemove must be a string" })
    .min(1, "sessionToRemove is required")
    .max(200, "sessionToRemove is longer than 200 characters"),
  replacementSession: z
    .string({ error: "replacementSession must be a string" })
    .max(200, "replacementSession is longer than 200 characters")
    .nullish()
    .openapi({ description: "the session that takes its place; empty or absent: none" }),
});

export function registerRemoveSession(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: removeSessionRequest,
      method: "post",
      path: "/{participantID}/remove-session",
      tags: ["participants"],
      summary: "Remove a study session from a participant",
      description:
        "When `sessionToRemove` is the participant's current study session, `replacementSession` (or none) takes " +
        "its place; every response of the participant recorded under it (`context.session`) is relabelled. " +
        "Answers the participant and how many responses changed. Audited (`participant.remove-session`). An " +
        "unknown participant is a 404 (case-backend: 500). Requires `edit-participant-data`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams },
      responses: {
        200: jsonContent(
          z.object({ message: z.string(), participant: participantSchema, responsesUpdated: z.number().int() }),
          "session removed",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "invalid body: sessionToRemove missing or empty",
          404: "study or participant not found",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "edit-participant-data");
      const body = c.req.valid("json");
      const { participant, responsesUpdated } = await removeStudySession(
        db,
        {
          studyKey,
          participantId: participantID,
          sessionToRemove: body.sessionToRemove,
          replacementSession: body.replacementSession ?? "",
          actor: who.subject,
        },
        nowSeconds(deps),
      );
      return c.json(
        { message: "session removed", participant: presentParticipant(participant), responsesUpdated },
        200,
      );
    },
  );
}
