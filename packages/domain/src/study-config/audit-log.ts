import { and, desc, eq, sql } from "drizzle-orm";
import { auditLog, type Executor } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";
import { decodePageCursor, encodePageCursor, exactInstant, invalidCursor, isExactAt, type Page } from "./page-cursor";

/** One recorded management change of a study (see admin/audit.ts for who writes them). */
export interface AuditLogEntry {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  at: Date;
}

const exactAt = exactInstant(auditLog.at);

/** One page of the study's audit log, newest first (keyset over the study-and-time index). */
export async function listAuditLog(
  db: Executor,
  studyKey: string,
  page: { limit: number; cursor?: string },
): Promise<Page<AuditLogEntry>> {
  await getStudy(db, studyKey);
  const before = page.cursor === undefined ? undefined : decodePageCursor(page.cursor, ["string", "number"]);
  if (before && !isExactAt(String(before[0]))) throw invalidCursor();
  const rows = await db
    .select({
      id: auditLog.id,
      actor: auditLog.actor,
      action: auditLog.action,
      target: auditLog.target,
      details: auditLog.details,
      at: auditLog.at,
      exactAt,
    })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.studyKey, studyKey),
        before === undefined
          ? undefined
          : sql`(${auditLog.at}, ${auditLog.id}) < (${String(before[0])}::timestamptz, ${Number(before[1])})`,
      ),
    )
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    // one more than the page: whether it exists says if there is a next page
    .limit(page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return {
    items: items.map(({ exactAt: _exact, ...entry }) => entry),
    nextCursor: rows.length > page.limit && last ? encodePageCursor([last.exactAt, last.id]) : null,
  };
}
