import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { removeStudyCode, removeStudyCodeList } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { successSchema } from "../variables/variable-params";
import { listKeyQuery } from "./code-list-query";

export function registerRemoveCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/codes",
      bothSlashes: true,
      tags: ["code-lists"],
      summary: "Remove a code, or a whole code list (CASE)",
      description:
        "With `code`: that code (audit `code-list.remove`); without: every code of the list (audit " +
        "`code-list.delete`, with the count). A code or list that is not there is 404 (case-backend answers " +
        "200). Requires `manage-study-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: z.object({
          listKey: listKeyQuery,
          code: z
            .string()
            .optional()
            .transform((raw) => raw?.trim() ?? "")
            .openapi({ param: { name: "code", in: "query" }, type: "string", description: "absent: the whole list" }),
        }),
      },
      responses: {
        200: jsonContent(successSchema, "removed"),
        ...errorResponses([400, 401, 403, 404], { 404: "study, list or code not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { listKey, code } = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-code-lists");
      if (code === "") await removeStudyCodeList(db, studyKey, listKey, who.subject);
      else await removeStudyCode(db, studyKey, listKey, code, who.subject);
      return c.json({ success: true as const }, 200);
    },
  );
}
