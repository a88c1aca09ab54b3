import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getExplorerResponse, surveyVersionsForFormatting } from "@studyflow/domain/data-explorer";
import { nowSeconds } from "@studyflow/domain/foundation";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";
import { flatResponseSchema, flattenResponses } from "./present";
import { flatOptions, responseFormatQuery } from "./response-format-query";

export function registerGetResponse(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/responses/{responseID}",
      tags: ["data-explorer"],
      summary: "One response, as a flat CASE object",
      description:
        "Flattened with its survey's versions, as the list flattens (`shortKeys`, `questionOptionSep`). Requires `get-responses`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField, responseID: idParam("responseID") }),
        query: responseFormatQuery,
      },
      responses: {
        200: jsonContent(z.object({ response: flatResponseSchema }), "the response"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or no such response in it" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, responseID } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-responses");
      const { response, study } = await getExplorerResponse(db, studyKey, responseID);
      const versions = await surveyVersionsForFormatting(db, studyKey, response.key);
      const [flat] = flattenResponses(
        response.key,
        versions,
        [response],
        flatOptions(query, study.trackAccount, nowSeconds(deps)),
      );
      return c.json({ response: flat ?? {} }, 200);
    },
  );
}
