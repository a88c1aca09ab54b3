import { and, desc, eq, or, sql } from "drizzle-orm";
import { tasks, type Executor, type TaskKind } from "@studyflow/db";
import type { ManagementSubject } from "../access/permissions";
import { getStudy } from "../studies/study-repository";
import {
  decodePageCursor,
  encodePageCursor,
  exactInstant,
  invalidCursor,
  isExactAt,
  type Page,
} from "../study-config/page-cursor";
import type { TaskRow } from "./task-service";

export interface TaskListQuery {
  limit: number;
  /** nextCursor of the previous page. */
  cursor?: string;
  /** Only run-actions tasks, or only timer ticks; both when absent. */
  kind?: TaskKind;
}

const exactCreatedAt = exactInstant(tasks.createdAt);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The study's tasks the caller may see, newest first: what getVisibleTask would show one by one
 * (an admin every task; anyone else their own run-actions and the study's timer ticks). Keyset
 * paged over the study-and-creation index, so a study with years of hourly ticks pages as fast as
 * a new one.
 */
export async function listVisibleTasks(
  db: Executor,
  studyKey: string,
  who: ManagementSubject,
  query: TaskListQuery,
): Promise<Page<TaskRow>> {
  await getStudy(db, studyKey);
  const before = query.cursor === undefined ? undefined : decodePageCursor(query.cursor, ["string", "string"]);
  if (before && (!isExactAt(String(before[0])) || !UUID.test(String(before[1])))) throw invalidCursor();
  const visible = who.isAdmin ? undefined : or(eq(tasks.createdBy, who.subject), eq(tasks.kind, "timer"));
  const rows = await db
    .select({ task: tasks, exactCreatedAt })
    .from(tasks)
    .where(
      and(
        eq(tasks.studyKey, studyKey),
        visible,
        query.kind === undefined ? undefined : eq(tasks.kind, query.kind),
        before === undefined
          ? undefined
          : sql`(${tasks.createdAt}, ${tasks.id}) < (${String(before[0])}::timestamptz, ${String(before[1])}::uuid)`,
      ),
    )
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    // one more than the page: whether it exists says if there is a next page
    .limit(query.limit + 1);
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return {
    items: items.map((row) => row.task),
    nextCursor: rows.length > query.limit && last ? encodePageCursor([last.exactCreatedAt, last.task.id]) : null,
  };
}
