import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { listProfileStudies } from "@studyflow/domain/participants";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { participantStudySchema, presentProfileStudy } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdQuery } from "../../schemas";

export function registerListStudies(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/studies",
      tags: ["participant"],
      summary: "The studies a profile takes part in",
      description:
        "Every study the profile has a participant in, whatever its status there (active, exited, …), by study key, " +
        "with the study's name, description, tags and start date.",
      security: PARTICIPANT_SECURITY,
      request: { query: profileIdQuery },
      responses: {
        200: jsonContent(z.object({ studies: z.array(participantStudySchema) }), "the profile's studies"),
        ...errorResponses([400, 401, 403], {
          400: "profileID missing",
          403: "the profile is not the signed-in user's",
        }),
      },
    },
    async (c) => {
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").profileID);
      const studies = await listProfileStudies(db, profile.id);
      return c.json({ studies: studies.map(presentProfileStudy) }, 200);
    },
  );
}
