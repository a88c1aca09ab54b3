import { z } from "@hono/zod-openapi";
import { countParticipantsByStatus } from "@studyflow/domain/participants";
import { assertStudyVisible } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { participantCountsSchema, presentParticipantCounts } from "@studyflow/presenters/participant-counts";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

export function registerGetParticipantCounts(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/participant-counts",
      tags: ["studies"],
      summary: "How many participants a study has, by study status",
      description:
        "Exact counts kept by the database as participants change, read in one step however large the study. " +
        "Requires any permission for the study.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ participantCounts: participantCountsSchema }), "the counts"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyVisible(db, managementOf(c), studyKey);
      const counts = await countParticipantsByStatus(db, studyKey);
      return c.json({ participantCounts: presentParticipantCounts(counts) }, 200);
    },
  );
}
