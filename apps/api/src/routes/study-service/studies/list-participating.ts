import { z } from "@hono/zod-openapi";
import { listParticipatingStudies } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { caseStudyInfoSchema, presentCaseStudyInfo } from "./present";

export function registerListParticipating(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participating",
      tags: ["participant-studies"],
      summary: "The studies the signed-in user's profiles take part in (CASE)",
      description:
        "Every study in which at least one of the user's profiles is an active participant, by key, with `profileIds`: " +
        "those profiles. Studies a profile has left are not listed.",
      security: PARTICIPANT_SECURITY,
      responses: {
        200: jsonContent(z.object({ studies: z.array(caseStudyInfoSchema) }), "the studies"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const studies = await listParticipatingStudies(db, participantOf(c).userId);
      return c.json({ studies: studies.map(({ study, profileIds }) => presentCaseStudyInfo(study, profileIds)) }, 200);
    },
  );
}
