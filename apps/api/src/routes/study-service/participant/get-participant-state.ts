import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { getProfileParticipant } from "@studyflow/domain/participants";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { ownParticipantSchema, presentOwnParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdQuery, studyKeyParam } from "../../schemas";

export function registerGetParticipantState(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/studies/{studyKey}",
      tags: ["participant"],
      summary: "A profile's own state in a study",
      description:
        "Status, entry time, assigned surveys with their validity, flags and last submissions. Not shown: the " +
        "pseudonymous participant id and hashed account id (the study's data is keyed by them, and a copy in the " +
        "person's hands would tie that data back to them), linking codes (keys into other systems that researchers " +
        "hold), scheduled messages and the study session (the service's bookkeeping).",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, query: profileIdQuery },
      responses: {
        200: jsonContent(z.object({ participant: ownParticipantSchema }), "the participant's state"),
        ...errorResponses([400, 401, 403, 404], {
          400: "profileID missing",
          403: "the profile is not the signed-in user's",
          404: "study not found, or the profile is not a participant of it",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").profileID);
      const participant = await getProfileParticipant(db, studyKey, profile.id);
      return c.json({ participant: presentOwnParticipant(participant, profile.id) }, 200);
    },
  );
}
