import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyCodes } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyCode, studyCodeSchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { nextCursorField, pageQuery } from "../page-query";
import { codeListParams } from "./code-list-params";

export function registerListCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{listKey}/codes",
      tags: ["code-lists"],
      summary: "The codes of a study code list, a page at a time",
      description:
        "In code order; pages with `limit` and `cursor`. An unknown list is empty. Requires `manage-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: codeListParams, query: pageQuery },
      responses: {
        200: jsonContent(z.object({ codes: z.array(studyCodeSchema), nextCursor: nextCursorField }), "a page of codes"),
        ...errorResponses([400, 401, 403, 404], { 400: "bad limit or cursor", 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey, listKey } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-code-lists");
      const page = await listStudyCodes(db, studyKey, listKey, { limit, ...(cursor === undefined ? {} : { cursor }) });
      return c.json({ codes: page.items.map(presentStudyCode), nextCursor: page.nextCursor }, 200);
    },
  );
}
