import { and, asc, eq, gte, lte, type SQL } from "drizzle-orm";
import { reports, type Executor } from "@studyflow/db";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { isRowId } from "./explorer-ids";
import { readExplorerPage, type ExplorerPage, type ExplorerQuery } from "./explorer-page";
import type { ExplorerPageCache } from "./page-cache";
import { inKeys, inPageOrder, type OrderColumn } from "./paged-read";

export type ReportRow = typeof reports.$inferSelect;

/** `reportKey`, `pid`, `from`, `until` of the report routes: each one given replaces the filter's condition on its field. */
export interface ReportConditions {
  reportKey?: string;
  participantId?: string;
  /** Unix seconds, inclusive. */
  from?: number;
  until?: number;
}

/** case-backend lists reports newest first whatever `sort` says. */
const REPORT_ORDER: readonly OrderColumn[] = [
  { column: "timestamp", sqlType: "bigint", direction: "desc" },
  { column: "id", sqlType: "uuid", direction: "desc" },
];

function withConditions(filter: unknown, conditions: ReportConditions): unknown {
  const extra: Record<string, unknown> = {};
  if (conditions.reportKey) extra.key = conditions.reportKey;
  if (conditions.participantId) extra.participantID = conditions.participantId;
  const range: Record<string, number> = {};
  if (conditions.from !== undefined) range.$gte = conditions.from;
  if (conditions.until !== undefined) range.$lte = conditions.until;
  if (Object.keys(range).length > 0) extra.timestamp = range;
  if (Object.keys(extra).length === 0) return filter;
  if (filter === undefined || filter === null) return extra;
  if (typeof filter !== "object" || Array.isArray(filter))
    throw new Invalid("filter: expected an object of conditions");
  return { ...(filter as Record<string, unknown>), ...extra };
}

/** A page of the study's reports, newest first. */
export async function listExplorerReports(
  db: Executor,
  studyKey: string,
  query: Omit<ExplorerQuery, "sort">,
  conditions: ReportConditions,
  cache?: ExplorerPageCache,
): Promise<ExplorerPage<ReportRow>> {
  await getStudy(db, studyKey);
  const filter = withConditions(query.filter, conditions);
  return readExplorerPage(
    db,
    "reports",
    studyKey,
    { ...query, filter, order: REPORT_ORDER },
    cache,
    async (keys, executor) =>
      inPageOrder(
        keys,
        await executor
          .select()
          .from(reports)
          .where(and(eq(reports.studyKey, studyKey), inKeys(reports.id, keys, "uuid"))),
        (row) => row.id,
      ),
  );
}

export async function getExplorerReport(db: Executor, studyKey: string, reportId: string): Promise<ReportRow> {
  await getStudy(db, studyKey);
  const [row] = isRowId(reportId)
    ? await db
        .select()
        .from(reports)
        .where(and(eq(reports.studyKey, studyKey), eq(reports.id, reportId)))
        .limit(1)
    : [];
  if (!row) throw new NotFound(`report "${reportId}" not found in study "${studyKey}"`);
  return row;
}

/** The distinct report keys of the study, sorted; `from`/`until` of 0 mean none, as in case-backend. */
export async function listReportKeys(
  db: Executor,
  studyKey: string,
  conditions: Omit<ReportConditions, "reportKey">,
): Promise<string[]> {
  await getStudy(db, studyKey);
  const where: SQL[] = [eq(reports.studyKey, studyKey)];
  if (conditions.participantId) where.push(eq(reports.participantId, conditions.participantId));
  if (conditions.from !== undefined && conditions.from > 0) where.push(gte(reports.timestamp, conditions.from));
  if (conditions.until !== undefined && conditions.until > 0) where.push(lte(reports.timestamp, conditions.until));
  const rows = await db
    .selectDistinct({ key: reports.key })
    .from(reports)
    .where(and(...where))
    .orderBy(asc(reports.key));
  return rows.map((row) => row.key);
}
