import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { getProfileParticipant } from "@studyflow/domain/participants";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { caseParticipantStateSchema, presentCaseParticipantState } from "./present";
import { FORBIDDEN_PROFILE, pidQuery, studyParams } from "./profile-query";

export function registerParticipantState(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/participant-state",
      tags: ["participant-data"],
      summary: "A profile's participant state in a study (CASE)",
      description:
        "As case-backend shows it: the participant id, status, entry and change times, flags, assigned surveys, last " +
        "submissions and scheduled messages. Linking codes are never listed (`null`, as case-backend clears them; " +
        "read one by its key through linking-code); the hashed account id is not shown.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyParams, query: pidQuery },
      responses: {
        200: jsonContent(z.object({ participant: caseParticipantStateSchema }), "the participant's state"),
        ...errorResponses([400, 401, 403, 404], {
          400: "pid missing",
          403: FORBIDDEN_PROFILE,
          404: "study not found, or the profile is no participant of it",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").pid);
      const participant = await getProfileParticipant(db, studyKey, profile.id);
      return c.json({ participant: presentCaseParticipantState(participant) }, 200);
    },
  );
}
