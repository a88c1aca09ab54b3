import type { Executor } from "@studyflow/db";
import type { CaseFilterTarget } from "../case-filter/fields";
import { translateCaseSort } from "../case-filter/translate-sort";
import type { ExplorerPageCache } from "./page-cache";
import { countCaseRows, orderColumns, readCasePageKeys, type OrderColumn } from "./paged-read";

/** A page request as case-admin makes it: Mongo-style filter and sort, CASE's page and limit. */
export interface ExplorerQuery {
  filter?: unknown;
  sort?: unknown;
  /** 1-based; below 1 reads as 1. */
  page: number;
  limit: number;
}

export interface ExplorerPage<R> {
  rows: R[];
  totalCount: number;
  /** The page served: 1 when everything fits on one page, as case-backend answers. */
  page: number;
  limit: number;
}

/**
 * One page of a study's rows: counted, placed and read as case-backend pages (count, then the
 * page at (page-1)*limit; page 1 whenever the total is below one page), through the page cache.
 */
export async function readExplorerPage<R>(
  db: Executor,
  target: CaseFilterTarget,
  studyKey: string,
  query: ExplorerQuery & { order?: readonly OrderColumn[] },
  cache: ExplorerPageCache | undefined,
  loadRows: (keys: string[]) => Promise<R[]>,
): Promise<ExplorerPage<R>> {
  // the order is checked before anything is read: a bad sort is a 400 even on an empty study
  const order = query.order ?? orderColumns(target, translateCaseSort(target, query.sort));
  const request = { target, studyKey, filter: query.filter, order, ...(cache ? { cache } : {}) };
  const totalCount = await countCaseRows(db, request);
  const page = totalCount < query.limit ? 1 : Math.max(1, query.page);
  const offset = (page - 1) * query.limit;
  if (offset >= totalCount) return { rows: [], totalCount, page, limit: query.limit };
  const keys = await readCasePageKeys(db, { ...request, offset, limit: query.limit });
  return { rows: keys.length === 0 ? [] : await loadRows(keys), totalCount, page, limit: query.limit };
}
