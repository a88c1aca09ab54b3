import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listExplorerParticipants, type ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import { casePaginationSchema } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { LIST_DESCRIPTION, explorerListQuery, paginationOf, studyKeyField, toExplorerQuery } from "./explorer-query";

export function registerListParticipants(router: ApiRouter, deps: AppDeps, cache: ExplorerPageCache) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participants",
      tags: ["data-explorer"],
      summary: "A page of the study's participants",
      description:
        "Participants of every status that `filter` selects (fields participantID, studyStatus, currentStudySession, " +
        "enteredAt, modifiedAt, flags.<key>, linkingCodes.<key>, lastSubmission.<surveyKey>), by participant id unless " +
        "`sort` says otherwise. " +
        LIST_DESCRIPTION +
        " Requires `get-participant-states`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField }), query: explorerListQuery },
      responses: {
        200: jsonContent(
          z.object({ participants: z.array(participantSchema), pagination: casePaginationSchema }),
          "a page of participants",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "page, limit, filter or sort not valid",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
      const page = await listExplorerParticipants(db, studyKey, toExplorerQuery(query), cache);
      return c.json({ participants: page.rows.map(presentParticipant), pagination: paginationOf(page) }, 200);
    },
  );
}
