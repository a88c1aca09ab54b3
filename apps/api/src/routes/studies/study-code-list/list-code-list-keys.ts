import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyCodeListKeys } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { READ_CODE_LISTS } from "./code-list-query";

export function registerListCodeListKeys(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/list-keys",
      bothSlashes: true,
      tags: ["code-lists"],
      summary: "The keys of a study's code lists (CASE)",
      description: "Lists that hold codes, in key order. Requires `read-study-config` or `manage-study-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ listKeys: z.array(z.string()) }), "the list keys"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_CODE_LISTS);
      return c.json({ listKeys: await listStudyCodeListKeys(db, studyKey) }, 200);
    },
  );
}
