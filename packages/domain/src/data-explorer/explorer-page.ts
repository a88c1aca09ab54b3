import type { SQL } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Executor } from "@studyflow/db";
import type { CaseFilterTarget } from "../case-filter/fields";
import { translateCaseFilter } from "../case-filter/translate-filter";
import { translateCaseSort } from "../case-filter/translate-sort";
import type { ExplorerPageCache } from "./page-cache";
import { countCaseRows, orderColumns, readCasePageKeys, type OrderColumn } from "./paged-read";
import { idOrderServes, idPage } from "./id-buckets";
import { keptCounts, keptOrderServes, keptPage, keptShape } from "./time-buckets";

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

/** No conditions at all: absent, null or `{}`. */
const isEmptyFilter = (filter: unknown) =>
  filter === undefined ||
  filter === null ||
  (typeof filter === "object" && !Array.isArray(filter) && Object.keys(filter).length === 0);

/**
 * Runs `read` in one read-only snapshot (REPEATABLE READ), so a total and the page placed by it
 * agree however the study changes meanwhile; inside a caller's transaction, in that.
 */
async function inOneSnapshot<T>(db: Executor, read: (executor: Executor) => Promise<T>): Promise<T> {
  if (db instanceof PgTransaction) return read(db);
  return db.transaction(read, { isolationLevel: "repeatable read", accessMode: "read only" });
}

/**
 * One page of a study's rows: counted, placed and read as case-backend pages (count, then the
 * page at (page-1)*limit; page 1 whenever the total is below one page). Queries kept counts
 * answer (see time-buckets.ts) take their total, and in their time order their page's place, from
 * those, as every participant in id order does from its kept id prefixes (id-buckets.ts); the
 * others count (remembered by the page cache) and seek from a remembered boundary.
 */
export async function readExplorerPage<R>(
  db: Executor,
  target: CaseFilterTarget,
  studyKey: string,
  query: ExplorerQuery & { order?: readonly OrderColumn[] },
  cache: ExplorerPageCache | undefined,
  /**
   * The rows of the keys, in any order. `within`, when given, is a condition on the target's
   * table (its study included) that selects exactly those rows along an index: a loader may read
   * by it instead of looking each key up.
   */
  loadRows: (keys: string[], executor: Executor, within?: SQL) => Promise<R[]>,
): Promise<ExplorerPage<R>> {
  // the order is checked before anything is read: a bad sort is a 400 even on an empty study
  const order = query.order ?? orderColumns(target, translateCaseSort(target, query.sort));
  // and the filter too, whichever way it is then answered
  translateCaseFilter(target, query.filter);
  const kept = keptShape(target, query.filter, order);
  const request = { target, studyKey, filter: query.filter, order, ...(cache ? { cache } : {}) };
  return inOneSnapshot(db, async (executor) => {
    const counts = kept ? await keptCounts(executor, studyKey, kept) : null;
    const totalCount = counts ? counts.total : await countCaseRows(executor, request);
    const page = totalCount < query.limit ? 1 : Math.max(1, query.page);
    const offset = (page - 1) * query.limit;
    if (offset >= totalCount) return { rows: [], totalCount, page, limit: query.limit };
    // Walking an index in the order finds the page after about (offset + limit) / share of the
    // study's rows, where share is the part the filter selects; sorting the matches reads them
    // all once. Participants' filters on flags and the like have no index, and PostgreSQL guesses
    // their share at 0.5 %: told nothing, it walks the entry-order index for a filter that matches
    // a handful, visiting every participant. Past a tenth of the matches, the page is sorted (an
    // unfiltered walk visits no row it does not need).
    const sorted =
      target === "participants" && !isEmptyFilter(query.filter) && (offset + query.limit) * 10 > totalCount;
    const placed =
      kept && counts && keptOrderServes(kept, order)
        ? await keptPage(executor, studyKey, kept, counts, order, offset, query.limit)
        : kept && counts && idOrderServes(kept, order)
          ? await idPage(executor, studyKey, offset, query.limit)
          : null;
    const { keys, within } = placed ?? {
      keys: await readCasePageKeys(executor, { ...request, offset, limit: query.limit, sorted }),
      within: undefined,
    };
    return {
      rows: keys.length === 0 ? [] : await loadRows(keys, executor, within),
      totalCount,
      page,
      limit: query.limit,
    };
  });
}
