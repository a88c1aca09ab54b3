import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listParticipantResponses, type ResponseRow } from "@studyflow/domain/data-explorer";
import { casePaginationSchema } from "../../../case-compat";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { LIST_DESCRIPTION, explorerListQuery, paginationOf, toExplorerQuery } from "../data-explorer/explorer-query";
import { participantParams } from "./participant-params";

/** case-backend's SurveyResponse as its JSON names the fields. */
const caseSurveyResponseSchema = z
  .object({
    id: z.string(),
    key: z.string(),
    participantId: z.string(),
    versionId: z.string(),
    openedAt: z.number().int(),
    submittedAt: z.number().int(),
    arrivedAt: z.number().int(),
    responses: z.array(z.unknown()),
    context: z.record(z.string(), z.string()),
  })
  .openapi("CaseSurveyResponse");

const presentResponse = (row: ResponseRow): z.infer<typeof caseSurveyResponseSchema> => ({
  id: row.id,
  key: row.key,
  participantId: row.participantId,
  versionId: row.versionId,
  openedAt: row.openedAt,
  submittedAt: row.submittedAt,
  arrivedAt: row.arrivedAt,
  responses: row.responses,
  context: row.context,
});

export function registerListParticipantResponses(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{participantID}/responses",
      tags: ["participants"],
      summary: "A page of a participant's responses, as stored CASE SurveyResponses",
      description:
        "Every survey's responses of the participant that `filter` selects (fields key, versionID, openedAt, " +
        "submittedAt, arrivedAt, context.<key>; the participant's id is always a condition), in arrival order " +
        "unless `sort` says otherwise, not flattened. " +
        LIST_DESCRIPTION +
        " An unknown participant is a 404. Requires `get-responses`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams, query: explorerListQuery },
      responses: {
        200: jsonContent(
          z.object({ responses: z.array(caseSurveyResponseSchema), pagination: casePaginationSchema }),
          "a page of responses",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "page, limit, filter or sort not valid",
          404: "study or participant not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-responses");
      const page = await listParticipantResponses(db, studyKey, participantID, toExplorerQuery(c.req.valid("query")));
      return c.json({ responses: page.rows.map(presentResponse), pagination: paginationOf(page) }, 200);
    },
  );
}
