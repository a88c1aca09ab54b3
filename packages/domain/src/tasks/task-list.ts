import { and, eq, or } from "drizzle-orm";
import { tasks, type Executor, type TaskKind } from "@studyflow/db";
import type { ManagementSubject } from "../access/permissions";
import { getStudy } from "../studies/study-repository";
import { newestFirst, type Page } from "../study-config/page-cursor";
import type { TaskRow } from "./task-row";

export interface TaskListQuery {
  limit: number;
  /** nextCursor of the previous page. */
  cursor?: string;
  /** Only run-actions tasks, or only timer ticks; both when absent. */
  kind?: TaskKind;
}

const paging = newestFirst(tasks.createdAt, tasks.id, "uuid");

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
  const olderThan = paging.olderThan(query.cursor);
  const visible = who.isAdmin ? undefined : or(eq(tasks.createdBy, who.subject), eq(tasks.kind, "timer"));
  const rows = await db
    .select({ task: tasks, exactCreatedAt: paging.exact })
    .from(tasks)
    .where(
      and(
        eq(tasks.studyKey, studyKey),
        visible,
        query.kind === undefined ? undefined : eq(tasks.kind, query.kind),
        olderThan,
      ),
    )
    .orderBy(...paging.orderBy)
    // one more than the page: whether it exists says if there is a next page
    .limit(query.limit + 1);
  return paging.pageOf(
    rows,
    query.limit,
    (row) => [row.exactCreatedAt, row.task.id],
    (row) => row.task,
  );
}
