import { z } from "@hono/zod-openapi";
import type { Executor } from "@studyflow/db";
import { surveyVersionsForFormatting, type ExplorerPage, type ExplorerResponse } from "@studyflow/domain/data-explorer";
import { casePaginationSchema } from "../../../case-compat";
import { explorerListQuery, paginationOf } from "./explorer-query";
import { flatResponseSchema, flattenResponses } from "./present";
import { flatOptions, responseFormatQuery } from "./response-format-query";

/**
 * The query of a page of one survey's responses, as the explorer and the participant's own
 * responses take it: page, limit, filter and sort, how to flatten, and the survey (required).
 */
export const responseListQuery = explorerListQuery.extend(responseFormatQuery.shape).extend({
  surveyKey: z.string().max(200, "surveyKey is longer than 200 characters").optional().openapi({ example: "weekly" }),
});

export const responsePageSchema = z.object({
  responses: z.array(flatResponseSchema),
  pagination: casePaginationSchema,
});

/** A page of responses to one survey, flattened with the survey's versions as CASE flattens them. */
export async function presentResponsePage(
  db: Executor,
  studyKey: string,
  page: ExplorerPage<ExplorerResponse> & { surveyKey: string },
  query: z.infer<typeof responseListQuery>,
  accountColumns: boolean,
  now: number,
): Promise<z.infer<typeof responsePageSchema>> {
  const versions = page.rows.length === 0 ? [] : await surveyVersionsForFormatting(db, studyKey, page.surveyKey);
  const responses = flattenResponses(page.surveyKey, versions, page.rows, flatOptions(query, accountColumns, now));
  return { responses, pagination: paginationOf(page) };
}
