import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { countStudyCodes, listStudyCodeEntries } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import { caseOffset, casePageQuery, casePagination, casePaginationSchema } from "../../../case-compat/pagination";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { READ_CODE_LISTS, listKeyQuery } from "./code-list-query";

const codeEntrySchema = z
  .object({
    id: z.string(),
    studyKey: z.string(),
    listKey: z.string(),
    code: z.string(),
    addedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("StudyCodeListEntry");

export function registerListCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/codes",
      bothSlashes: true,
      tags: ["code-lists"],
      summary: "A page of a code list's codes (CASE)",
      description:
        "In the order they were added (the order rules draw them in), `page` and `limit` as case-backend reads " +
        "them. Requires `read-study-config` or `manage-study-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, query: casePageQuery.extend({ listKey: listKeyQuery }) },
      responses: {
        200: jsonContent(
          z.object({ codeList: z.array(codeEntrySchema), pagination: casePaginationSchema }),
          "the page of codes",
        ),
        ...errorResponses([400, 401, 403, 404], { 400: "no listKey, or page/limit not whole numbers" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { listKey, page, limit } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_CODE_LISTS);
      const pagination = casePagination(await countStudyCodes(db, studyKey, listKey), page, limit);
      const entries = await listStudyCodeEntries(db, studyKey, listKey, {
        offset: caseOffset(pagination),
        limit: pagination.pageSize,
      });
      const codeList = entries.map((entry) => ({
        id: String(entry.id),
        studyKey,
        listKey,
        code: entry.code,
        addedAt: entry.addedAt.toISOString(),
      }));
      return c.json({ codeList, pagination }, 200);
    },
  );
}
