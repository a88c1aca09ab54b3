import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertProfileOfUser, listOwnResponses, surveyVersionsForFormatting } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { casePaginationSchema } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { explorerListQuery, paginationOf, toExplorerQuery } from "../case-management/data-explorer/explorer-query";
import { flatResponseSchema, flattenResponses } from "../case-management/data-explorer/present";
import { flatOptions, responseFormatQuery } from "../case-management/data-explorer/response-format-query";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { FORBIDDEN_PROFILE, pidQuery, studyParams } from "./profile-query";

const route = createRoute({
  method: "get",
  path: "/{studyKey}/responses",
  tags: ["participant-data"],
  summary: "A page of a profile's responses to one survey, flattened (CASE)",
  description:
    "The profile's responses to `surveyKey` (required) that `filter` selects (fields versionID, openedAt, " +
    "submittedAt, arrivedAt, context.<key>), by submission time unless `sort` says otherwise, each flattened as " +
    "CASE's data explorer flattens them (no account columns). Paged as case-backend pages (`page`, `limit`). The " +
    "participant's own id is always a condition, whatever the filter says.",
  security: PARTICIPANT_SECURITY,
  request: {
    params: studyParams,
    query: pidQuery
      .merge(explorerListQuery)
      .extend(responseFormatQuery.shape)
      .extend({
        surveyKey: z
          .string()
          .max(200, "surveyKey is longer than 200 characters")
          .optional()
          .openapi({ example: "weekly" }),
      }),
  },
  responses: {
    200: jsonContent(
      z.object({ responses: z.array(flatResponseSchema), pagination: casePaginationSchema }),
      "a page of responses",
    ),
    ...errorResponses([400, 401, 403, 404], {
      400: "pid or surveyKey missing; page, limit, filter or sort not valid",
      403: FORBIDDEN_PROFILE,
      404: "study not found",
    }),
  },
});

export function registerResponses(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    const query = c.req.valid("query");
    const profile = await assertProfileOfUser(db, participantOf(c).userId, query.pid);
    const page = await listOwnResponses(db, studyKey, profile.id, query.surveyKey, toExplorerQuery(query));
    const versions = page.rows.length === 0 ? [] : await surveyVersionsForFormatting(db, studyKey, page.surveyKey);
    const responses = flattenResponses(page.surveyKey, versions, page.rows, flatOptions(query, false));
    return c.json({ responses, pagination: paginationOf(page) }, 200);
  });
}
