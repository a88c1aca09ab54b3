import { assertStudyPermission } from "@studyflow/domain/access";
import { countStudyCodes } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { codeListSummarySchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { codeListParams } from "./code-list-params";

export function registerCountCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{listKey}/count",
      tags: ["code-lists"],
      summary: "How many codes a study code list holds",
      description: "0 for an unknown list. Requires `manage-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: codeListParams },
      responses: {
        200: jsonContent(codeListSummarySchema, "the list's size"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey, listKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-code-lists");
      return c.json({ listKey, codeCount: await countStudyCodes(db, studyKey, listKey) }, 200);
    },
  );
}
