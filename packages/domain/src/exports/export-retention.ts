import { and, eq, isNull, sql } from "drizzle-orm";
import { storedFiles, type Database } from "@studyflow/db";
import type { FileStore } from "../files/file-store";

export interface ExportRetention {
  /** Days an export task's file is kept (EXPORT_RETENTION_DAYS). */
  taskExportDays: number;
  /** Days a daily export's file is kept (DAILY_EXPORT_RETENTION_DAYS). */
  dailyExportDays: number;
}

/** Files removed per round: one transaction each, so a round never holds many locks for long. */
const FILES_PER_ROUND = 100;

/**
 * Removes the contents of export files past retention and marks them expired; the record stays,
 * so a download says the file expired instead of not knowing it. A file's own `expires_at`, when
 * set, overrides the retention of its kind. Files of canceled and failed exports go the same way.
 * Participants' uploaded files share the store but are not exports: they stay until deleted.
 * Returns the number of files removed.
 */
export async function removeExpiredExportFiles(
  db: Database,
  store: FileStore,
  options: ExportRetention & { now: number },
): Promise<number> {
  const now = new Date(options.now);
  const isDaily = sql`exists (select 1 from daily_exports d where d.task_id = ${storedFiles.taskId})`;
  const due = sql`coalesce(${storedFiles.expiresAt}, ${storedFiles.createdAt} + make_interval(days =>
    case when ${isDaily} then ${options.dailyExportDays}::int else ${options.taskExportDays}::int end)) < ${now.toISOString()}::timestamptz`;
  let removed = 0;
  for (;;) {
    const batch = await db
      .select()
      .from(storedFiles)
      .where(
        and(
          isNull(storedFiles.expiredAt),
          due,
          sql`not exists (select 1 from participant_files p where p.stored_file_id = ${storedFiles.id})`,
        ),
      )
      .limit(FILES_PER_ROUND);
    for (const file of batch) {
      await db.transaction(async (tx) => {
        await store.removeContents(tx, file);
        await tx
          .update(storedFiles)
          .set({ expiredAt: now })
          .where(and(eq(storedFiles.id, file.id), isNull(storedFiles.expiredAt)));
      });
      removed += 1;
    }
    if (batch.length < FILES_PER_ROUND) return removed;
  }
}
