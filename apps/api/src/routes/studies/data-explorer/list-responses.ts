import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listExplorerResponses, type ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { nowSeconds } from "@studyflow/domain/foundation";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { LIST_DESCRIPTION, studyKeyField, toExplorerQuery } from "./explorer-query";
import { presentResponsePage, responseListQuery, responsePageSchema } from "./response-page";

export function registerListResponses(router: ApiRouter, deps: AppDeps, cache: ExplorerPageCache) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/responses",
      tags: ["data-explorer"],
      summary: "A page of one survey's responses, as flat CASE objects",
      description:
        "The responses of `surveyKey` (required) that `filter` selects (fields participantID, key, versionID, openedAt, " +
        "submittedAt, arrivedAt, context.<key>; `key` is always the surveyKey), by submission time unless `sort` says " +
        "otherwise, each flattened as CASE's data explorer and JSON export flatten them. " +
        LIST_DESCRIPTION +
        " Requires `get-responses`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField }),
        query: responseListQuery,
      },
      responses: {
        200: jsonContent(responsePageSchema, "a page of responses"),
        ...errorResponses([400, 401, 403, 404], {
          400: "surveyKey missing; page, limit, filter or sort not valid",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-responses");
      const page = await listExplorerResponses(db, studyKey, query.surveyKey, toExplorerQuery(query), cache);
      return c.json(
        await presentResponsePage(db, studyKey, page, query, page.study.trackAccount, nowSeconds(deps)),
        200,
      );
    },
  );
}
