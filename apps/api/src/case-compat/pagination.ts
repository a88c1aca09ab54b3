import { z } from "@hono/zod-openapi";

/** case-backend's page size when none (or one below 1) is given. */
export const CASE_DEFAULT_PAGE_SIZE = 10;
/**
 * The largest page served. case-backend has no bound; a page is read and shaped in memory, so one
 * is needed: a larger `limit` is served as this many, and `pagination.pageSize` says so.
 */
export const CASE_MAX_PAGE_SIZE = 1_000;

/** Go's strconv.ParseInt: optional sign, decimal digits, nothing else. */
const goInteger = (name: string) =>
  z
    .string()
    .regex(/^[+-]?\d{1,18}$/, `${name} must be a whole number`)
    .optional();

/**
 * `page` and `limit` as case-backend reads them: absent → 1 and 10; below 1 → 1 and 10; not an
 * integer → 400 (case-backend answers "invalid request"; this names the parameter).
 */
export const casePageQuery = z.object({
  page: goInteger("page")
    .transform((raw) => Math.max(1, raw === undefined ? 1 : Number(raw)))
    .openapi({ param: { name: "page", in: "query" }, type: "integer", description: "1-based page number (default 1)" }),
  limit: goInteger("limit")
    .transform((raw) => {
      const limit = raw === undefined ? CASE_DEFAULT_PAGE_SIZE : Number(raw);
      return limit < 1 ? CASE_DEFAULT_PAGE_SIZE : Math.min(limit, CASE_MAX_PAGE_SIZE);
    })
    .openapi({
      param: { name: "limit", in: "query" },
      type: "integer",
      description: `page size (default ${CASE_DEFAULT_PAGE_SIZE}, at most ${CASE_MAX_PAGE_SIZE})`,
    }),
});

export const casePaginationSchema = z
  .object({
    totalCount: z.number().int(),
    currentPage: z.number().int(),
    totalPages: z.number().int(),
    pageSize: z.number().int(),
  })
  .openapi("CasePagination");

export type CasePagination = z.infer<typeof casePaginationSchema>;

/**
 * The `pagination` of a CASE page, computed as case-backend computes it: when everything fits on
 * one page the current page is 1 whatever was asked; otherwise the asked page, even past the last
 * (which then holds nothing).
 */
export function casePagination(totalCount: number, page: number, limit: number): CasePagination {
  const pageSize = limit === 0 ? CASE_DEFAULT_PAGE_SIZE : limit;
  const currentPage = totalCount < pageSize ? 1 : Math.max(1, page);
  return { totalCount, currentPage, totalPages: Math.ceil(totalCount / pageSize), pageSize };
}

/** Rows to skip for a page of casePagination. */
export const caseOffset = (pagination: CasePagination) => (pagination.currentPage - 1) * pagination.pageSize;
