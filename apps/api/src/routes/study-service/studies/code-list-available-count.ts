import { z } from "@hono/zod-openapi";
import { countStudyCodes } from "@studyflow/domain/study-config";
import { checkInstanceId } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, studyKeyParam } from "../../schemas";
import { listKeyQuery } from "./code-list-query";

export function registerCodeListAvailableCount(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/code-lists/available-count",
      tags: ["participant-studies"],
      summary: "How many codes a study code list holds (public, CASE)",
      description:
        "case-backend's getStudyCodeListAvailableCount: `{availableCount}`, the codes left in the study's list " +
        "`listKey` (required: 400); 0 for a list that holds none. No token, as in case-backend. An unknown study is " +
        "404 (case-backend answers 0).",
      request: { params: studyKeyParam, query: listKeyQuery },
      responses: {
        200: jsonContent(
          z.object({ availableCount: z.number().int().openapi({ description: "codes in the list" }) }),
          "the count",
        ),
        ...errorResponses([400, 404], {
          400: "listKey missing, or instanceID names another instance",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { instanceID, listKey } = c.req.valid("query");
      checkInstanceId(deps.config, instanceID);
      const availableCount = await countStudyCodes(db, c.req.valid("param").studyKey, listKey);
      return c.json({ availableCount }, 200);
    },
  );
}
