import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyCodeLists } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { codeListSummarySchema, presentCodeListSummary } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListCodeLists(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["code-lists"],
      summary: "A study's code lists with their sizes",
      description: "The lists that hold codes, by key. Requires `manage-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ codeLists: z.array(codeListSummarySchema) }), "the study's code lists"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-code-lists");
      const lists = await listStudyCodeLists(db, studyKey);
      return c.json({ codeLists: lists.map(presentCodeListSummary) }, 200);
    },
  );
}
