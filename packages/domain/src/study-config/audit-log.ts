import { and, eq } from "drizzle-orm";
import { auditLog, type Executor } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";
import { newestFirst, type Page } from "./page-cursor";

/** One recorded management change of a study (see foundation/audit.ts for who writes them). */
export interface AuditLogEntry {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  at: Date;
}

const paging = newestFirst(auditLog.at, auditLog.id, "number");

/** One page of the study's audit log, newest first (keyset over the study-and-time index). */
export async function listAuditLog(
  db: Executor,
  studyKey: string,
  page: { limit: number; cursor?: string },
): Promise<Page<AuditLogEntry>> {
  await getStudy(db, studyKey);
  const olderThan = paging.olderThan(page.cursor);
  const rows = await db
    .select({
      id: auditLog.id,
      actor: auditLog.actor,
      action: auditLog.action,
      target: auditLog.target,
      details: auditLog.details,
      at: auditLog.at,
      exactAt: paging.exact,
    })
    .from(auditLog)
    .where(and(eq(auditLog.studyKey, studyKey), olderThan))
    .orderBy(...paging.orderBy)
    // one more than the page: whether it exists says if there is a next page
    .limit(page.limit + 1);
  return paging.pageOf(
    rows,
    page.limit,
    (row) => [row.exactAt, row.id],
    ({ exactAt: _exact, ...entry }) => entry,
  );
}
