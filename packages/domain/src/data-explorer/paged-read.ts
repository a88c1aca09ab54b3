import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { Executor } from "@studyflow/db";
import { CASE_FIELDS, type CaseFilterTarget } from "../case-filter/fields";
import { translateCaseFilter } from "../case-filter/translate-filter";
import type { CaseSortKey } from "../case-filter/translate-sort";
import type { ExplorerPageCache } from "./page-cache";

/** Where a target's rows live and which column tells two rows of a study apart. */
const TABLES: Record<CaseFilterTarget, { table: string; unique: OrderColumn }> = {
  // (study_key, participant_id) is unique and indexed: pages of participants read from that index alone
  participants: { table: "participants", unique: { column: "participant_id", sqlType: "text", direction: "asc" } },
  responses: { table: "survey_responses", unique: { column: "id", sqlType: "uuid", direction: "asc" } },
  reports: { table: "reports", unique: { column: "id", sqlType: "uuid", direction: "asc" } },
};

export interface OrderColumn {
  column: string;
  sqlType: "text" | "bigint" | "uuid";
  direction: "asc" | "desc";
}

/** The sort keys as columns, ended by the target's unique column so the order is total (and a key is a position). */
export function orderColumns(target: CaseFilterTarget, sort: readonly CaseSortKey[]): OrderColumn[] {
  const fields = CASE_FIELDS[target];
  const columns: OrderColumn[] = sort.map((key) => {
    const field = fields[key.field];
    const sqlType = field?.shape === "scalar" && field.type === "seconds" ? "bigint" : "text";
    return { column: key.column, sqlType, direction: key.direction };
  });
  const unique = TABLES[target].unique;
  if (!columns.some((column) => column.column === unique.column)) {
    // the tie-break runs the way the last key runs, so one index scan (either way) serves the order
    columns.push({ ...unique, direction: columns.at(-1)?.direction ?? unique.direction });
  }
  return columns;
}

const column = (name: string) => sql.identifier(name);
const param = (value: unknown, type: OrderColumn["sqlType"]) => sql`${value}::${sql.raw(type)}`;

/**
 * Rows from `values` on in the order, that row included: a row comparison when every key runs one
 * way (an index range), else spelled out.
 */
function from(order: readonly OrderColumn[], values: readonly unknown[]): SQL {
  if (order.every((key) => key.direction === order[0]!.direction)) {
    const op = order[0]!.direction === "asc" ? sql`>=` : sql`<=`;
    const left = sql.join(
      order.map((key) => column(key.column)),
      sql`, `,
    );
    const right = sql.join(
      order.map((key, i) => param(values[i], key.sqlType)),
      sql`, `,
    );
    return sql`(${left}) ${op} (${right})`;
  }
  const branches = order.map((key, i) => {
    const equal = order
      .slice(0, i)
      .map((prior, j) => sql`${column(prior.column)} = ${param(values[j], prior.sqlType)}`);
    // the last key (the unique column) lets the row itself in
    const last = i === order.length - 1;
    const op = key.direction === "asc" ? (last ? sql`>=` : sql`>`) : last ? sql`<=` : sql`<`;
    return sql.join([...equal, sql`${column(key.column)} ${op} ${param(values[i], key.sqlType)}`], sql` and `);
  });
  return sql`(${sql.join(branches, sql` or `)})`;
}

export interface CasePageRequest {
  target: CaseFilterTarget;
  studyKey: string;
  /** The Mongo-style filter (already merged with the route's own conditions). */
  filter: unknown;
  order: readonly OrderColumn[];
  /** 1-based page and page size, as casePagination computed them. */
  offset: number;
  limit: number;
  cache?: ExplorerPageCache;
  /**
   * The rows are sorted, not walked in an index's order: when few rows match a filter no index
   * serves, walking the order's index visits most of the study's rows to find them.
   */
  sorted?: boolean;
}

/** The query's identity for the page cache: its target, study, filter and order. */
const cacheKey = (request: CasePageRequest) =>
  JSON.stringify([request.target, request.studyKey, request.filter ?? null, request.order]);

/**
 * The number of rows of the study the filter selects, counted (remembered briefly, see
 * ExplorerPageCache); the queries kept counts answer do not come here (time-buckets.ts).
 */
export async function countCaseRows(db: Executor, request: Omit<CasePageRequest, "offset" | "limit">): Promise<number> {
  const { table } = TABLES[request.target];
  const where = translateCaseFilter(request.target, request.filter);
  const load = async () => {
    const rows = await db.execute<{ count: string }>(
      sql`select count(*) as count from ${column(table)} where ${column("study_key")} = ${request.studyKey} and ${where}`,
    );
    return Number(rows[0]?.count ?? 0);
  };
  return request.cache ? request.cache.count(cacheKey(request as CasePageRequest), request.studyKey, load) : load();
}

/**
 * The unique-column values of one page, in order. The page is found from the nearest remembered
 * page start at or before it (a keyset seek, then a short skip) rather than by skipping every row
 * from the first. One row past the page is read: it starts the next page and is remembered with
 * this page's own start, so paging on, back or again seeks. Only the ordering columns are read, so
 * with a matching index and no filter on other columns the read never visits the table.
 */
export async function readCasePageKeys(db: Executor, request: CasePageRequest): Promise<string[]> {
  const { table, unique } = TABLES[request.target];
  const where = translateCaseFilter(request.target, request.filter);
  const key = cacheKey(request);
  const start = request.cache?.nearestBoundary(key, request.studyKey, request.offset);
  const seek = start ? sql` and ${from(request.order, start.values)}` : sql``;
  const skip = request.offset - (start?.position ?? 0);
  const selected = sql.join(
    request.order.map((key, i) => sql`${column(key.column)}::text as ${column(`k${i}`)}`),
    sql`, `,
  );
  const ordered = (key: OrderColumn, i: number) =>
    // an expression of the first column, equal in value and order, which no index serves
    request.sorted && i === 0
      ? key.sqlType === "bigint"
        ? sql`(${column(key.column)} + 0)`
        : sql`(${column(key.column)}::text || '')`
      : column(key.column);
  const orderBy = sql.join(
    request.order.map((key, i) => sql`${ordered(key, i)} ${sql.raw(key.direction)}`),
    sql`, `,
  );
  const rows = await db.execute<Record<string, string>>(
    sql`select ${selected} from ${column(table)}
        where ${column("study_key")} = ${request.studyKey} and ${where}${seek}
        order by ${orderBy} offset ${skip} limit ${request.limit + 1}`,
  );
  const valuesOf = (row: Record<string, string>) => request.order.map((_, i) => row[`k${i}`]);
  if (request.cache) {
    const first = rows[0];
    if (first) request.cache.remember(key, request.studyKey, request.offset, valuesOf(first));
    const next = rows[request.limit];
    if (next) request.cache.remember(key, request.studyKey, request.offset + request.limit, valuesOf(next));
  }
  const uniqueIndex = request.order.findIndex((key) => key.column === unique.column);
  return rows.slice(0, request.limit).map((row) => row[`k${uniqueIndex}`]!);
}

/**
 * `column` is one of `keys`, with the keys sent as one JSON parameter: a page of 1 000 keys as 1 000
 * bind parameters costs the driver and the planner about 10 ms more.
 */
export function inKeys(column: SQLWrapper, keys: readonly string[], type: "text" | "uuid" = "text"): SQL {
  return sql`${column} in (select (jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))::${sql.raw(type)})`;
}

/** Puts rows read by their unique values back in the page's order. */
export function inPageOrder<R>(keys: readonly string[], rows: readonly R[], keyOf: (row: R) => string): R[] {
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.flatMap((key) => {
    const row = byKey.get(key);
    return row ? [row] : [];
  });
}
