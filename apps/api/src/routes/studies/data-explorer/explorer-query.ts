import { z } from "@hono/zod-openapi";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { type ExplorerQuery } from "@studyflow/domain/data-explorer";
import { caseJsonQueryParam, casePageQuery, casePagination, type CasePagination } from "../../../case-compat";
import { keyString } from "../../schemas";

/** `page`, `limit`, `filter`, `sort` of the explorer's lists, as case-admin sends them. */
export const explorerListQuery = casePageQuery.extend({
  filter: caseJsonQueryParam(
    "filter",
    'Mongo-style conditions, e.g. {"studyStatus":"active","flags.group":{"$in":["a","b"]}}',
  ),
  sort: caseJsonQueryParam("sort", 'e.g. {"enteredAt":-1}'),
});

export type ExplorerListQuery = z.infer<typeof explorerListQuery>;

/** The list query as the domain takes it; a filter or sort that is no JSON is a 400 naming it. */
export function toExplorerQuery(query: ExplorerListQuery): ExplorerQuery {
  return {
    filter: parseCaseJsonParam("filter", query.filter),
    sort: parseCaseJsonParam("sort", query.sort),
    page: query.page,
    limit: query.limit,
  };
}

export function paginationOf(page: { totalCount: number; page: number; limit: number }): CasePagination {
  return casePagination(page.totalCount, page.page, page.limit);
}

/** Ids of responses, reports and files in the path: bounded text; an id that names nothing is a 404. */
export const idParam = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(200, `${name} is longer than 200 characters`)
    .openapi({ param: { name, in: "path" } });

export const studyKeyField = keyString("studyKey").openapi({
  param: { name: "studyKey", in: "path" },
  example: "covid-cohort",
});

/** The description tail every explorer list shares. */
export const LIST_DESCRIPTION =
  "Pages as case-backend pages: `page` (default 1) and `limit` (default 10, at most 1000); `pagination` tells " +
  "`totalCount`, `currentPage` (1 when everything fits on one page), `totalPages` and `pageSize`. `filter` is " +
  "CASE's Mongo-style JSON ($and, $or, $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, implicit equality; $exists on " +
  "map entries); an unknown field or operator is a 400 naming it. Participants filtered only by status, entry " +
  "time or one flag's value (of a flag key with at most 64 values), and a survey's responses filtered only by " +
  "arrival time, take an exact total from counts the database keeps, and in entry (arrival) order their page's " +
  "place too. Any other query counts its total; that total and the page boundaries are remembered for 30 s per " +
  "process: a deep page seeks from the nearest remembered boundary, and meanwhile the total may lag, and a page " +
  "shift, by the rows written since.";
