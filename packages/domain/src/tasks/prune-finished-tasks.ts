import { rm } from "node:fs/promises";
import path from "node:path";
import { and, inArray, sql, type SQL } from "drizzle-orm";
import { storedFiles, tasks, type Database, type TaskKind, type TaskStatus } from "@studyflow/db";
import type { FileStore } from "../files/file-store";
import type { TaskRetentionDefaults } from "./study-task-retention";

/**
 * Tasks removed per transaction. Each removal also deletes the tasks' chunk rows and file records
 * and sets their rule failures' and daily exports' task to null (both indexed, migration 0015), so
 * a transaction of this many tasks stays short: the row locks it takes never hold up the API or a
 * running task for long, and a round killed halfway loses at most one batch's work.
 */
export const PRUNE_BATCH_SIZE = 200;

/** Finished: what a task never leaves (TERMINAL_STATUSES). A queued or running task is never removed. */
export const FINISHED_TASK_STATUSES = ["completed", "failed", "canceled", "skipped"] as const satisfies TaskStatus[];
const FINISHED = sql.raw(`(${FINISHED_TASK_STATUSES.map((status) => `'${status}'`).join(", ")})`);

const DAY_MS = 86_400_000;

export interface PruneOptions {
  /** The instant retention is counted back from (milliseconds since the epoch). */
  now: number;
  /** TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS; a study's own setting overrides each. */
  defaults: TaskRetentionDefaults;
  /** RESULT_DIR, where run-actions and timer tasks keep their result documents. */
  resultDir: string;
  /** The export file store (EXPORT_FILE_STORE). */
  files: FileStore;
  /** Only this study's tasks. */
  studyKey?: string;
  batchSize?: number;
  /**
   * Stop starting batches after this long; the next round goes on where this one stopped. A round
   * on the maintenance queue should not keep the stale-task sweep behind it for long.
   */
  maxDurationMs?: number;
  /** Called after each batch with what this round has removed so far. */
  onProgress?: (removedSoFar: number) => void;
  /** The clock the time budget is measured on; tests stop it. */
  clock: () => number;
}

/** What retention removes (or would remove) of one study. */
export interface StudyPruneCount {
  studyKey: string;
  /** The retention that applied: the study's own, else the default; 0 keeps forever. */
  days: number;
  timerDays: number;
  /** Finished run-actions and export tasks. */
  tasks: number;
  /** Finished (or skipped) timer ticks. */
  timerTicks: number;
  /** Export file records removed with their tasks (their contents expired earlier, see export retention). */
  files: number;
}

export interface PruneSummary {
  /** The studies something was (or would be) removed from. */
  studies: StudyPruneCount[];
  tasks: number;
  timerTicks: number;
  files: number;
  /** False when the time budget ran out first: the next round removes the rest. */
  finished: boolean;
}

interface StudyRetention {
  studyKey: string;
  days: number;
  timerDays: number;
}

/** Every study (or one) with the retention that applies to it. */
async function studyRetentions(
  db: Database,
  options: Pick<PruneOptions, "defaults" | "studyKey">,
): Promise<StudyRetention[]> {
  const rows = await db.execute<{ key: string; days: number | null; timer_days: number | null }>(sql`
    select s.key, r.days, r.timer_days from studies s
    left join study_task_retention r on r.study_key = s.key
    ${options.studyKey === undefined ? sql`` : sql`where s.key = ${options.studyKey}`}
    order by s.key`);
  return rows.map((row) => ({
    studyKey: row.key,
    days: row.days ?? options.defaults.days,
    timerDays: row.timer_days ?? options.defaults.timerDays,
  }));
}

/**
 * The study's tasks of one group (timer ticks, or every other kind) that retention removes:
 * finished before the cutoff, and holding no export file whose contents are still kept (export
 * retention, EXPORT_RETENTION_DAYS / DAILY_EXPORT_RETENTION_DAYS, decides when a file's contents
 * go; the task and the expired file's record follow once the task's own retention has passed too,
 * so a download never loses its task while its file can still be read). The study's latest tick
 * always stays, whatever its age: the timer reads its slot to know that the current slot has
 * ticked, and would tick it again without it. Uses tasks_study_idx: a task finishes after it is
 * created, so only tasks created before the cutoff are read.
 */
function prunable(studyKey: string, group: "timer" | "other", cutoff: Date): SQL {
  const before = cutoff.toISOString();
  const kind =
    group === "timer"
      ? sql`t.kind = 'timer' and t.id <> (select x.id from tasks x where x.study_key = ${studyKey}
          and x.kind = 'timer' order by x.created_at desc limit 1)`
      : sql`t.kind <> 'timer'`;
  return sql`t.study_key = ${studyKey} and t.status in ${FINISHED}
    and t.created_at < ${before}::timestamptz
    and coalesce(t.finished_at, t.updated_at) < ${before}::timestamptz
    and ${kind}
    and not exists (select 1 from stored_files f where f.task_id = t.id and f.expired_at is null)`;
}

/** The groups whose retention is not "forever", with their cutoffs. */
function groupsOf(study: StudyRetention, now: number): { group: "timer" | "other"; cutoff: Date }[] {
  return [
    ...(study.days > 0 ? [{ group: "other" as const, cutoff: new Date(now - study.days * DAY_MS) }] : []),
    ...(study.timerDays > 0 ? [{ group: "timer" as const, cutoff: new Date(now - study.timerDays * DAY_MS) }] : []),
  ];
}

const emptyCount = (study: StudyRetention): StudyPruneCount => ({ ...study, tasks: 0, timerTicks: 0, files: 0 });

function summarise(counts: StudyPruneCount[], finished: boolean): PruneSummary {
  const studies = counts.filter((count) => count.tasks + count.timerTicks + count.files > 0);
  const sum = (field: "tasks" | "timerTicks" | "files") => studies.reduce((total, count) => total + count[field], 0);
  return { studies, tasks: sum("tasks"), timerTicks: sum("timerTicks"), files: sum("files"), finished };
}

/** What a round would remove now, per study, without removing anything (a dry run, a progress bar's total). */
export async function countPrunableTasks(
  db: Database,
  options: Pick<PruneOptions, "now" | "defaults" | "studyKey">,
): Promise<PruneSummary> {
  const counts: StudyPruneCount[] = [];
  for (const study of await studyRetentions(db, options)) {
    const count = emptyCount(study);
    for (const { group, cutoff } of groupsOf(study, options.now)) {
      const [row] = await db.execute<{ tasks: number; files: number }>(sql`
        select count(*)::int as tasks,
          (select count(*)::int from stored_files f where f.task_id in (select t.id from tasks t
            where ${prunable(study.studyKey, group, cutoff)})) as files
        from tasks t where ${prunable(study.studyKey, group, cutoff)}`);
      if (group === "timer") count.timerTicks += row?.tasks ?? 0;
      else count.tasks += row?.tasks ?? 0;
      count.files += row?.files ?? 0;
    }
    counts.push(count);
  }
  return summarise(counts, true);
}

/** The path of a result document under the result directory; null for one that would leave it. */
function resultDocumentPath(resultDir: string, resultFile: string): string | null {
  const root = path.resolve(resultDir);
  const full = path.resolve(root, resultFile);
  return full.startsWith(root + path.sep) ? full : null;
}

/**
 * Removes finished tasks past retention with what belongs to them: run-actions and timer result
 * documents (files under RESULT_DIR), export file records (and their parts, in either file
 * store), chunk checkpoints; rule failures and daily exports that name a removed task keep their
 * rows (the day stays exported) with the task set to null. Queued and running tasks are never
 * touched. Retention per study: its own setting, else `defaults`; 0 keeps forever.
 *
 * Batch by batch, each in its own short transaction; a round killed at any point leaves nothing
 * half-removed that the next round does not finish: files go first (a missing one is no error),
 * then the rows. Two rounds at once (two workers, the CLI) remove each task once.
 */
export async function pruneFinishedTasks(db: Database, options: PruneOptions): Promise<PruneSummary> {
  const { clock } = options;
  const started = clock();
  const batchSize = options.batchSize ?? PRUNE_BATCH_SIZE;
  const counts: StudyPruneCount[] = [];
  let removedSoFar = 0;
  const outOfTime = () => options.maxDurationMs !== undefined && clock() - started >= options.maxDurationMs;

  for (const study of await studyRetentions(db, options)) {
    const count = emptyCount(study);
    counts.push(count);
    for (const { group, cutoff } of groupsOf(study, options.now)) {
      for (;;) {
        if (outOfTime()) return summarise(counts, false);
        const batch = await db.execute<{ id: string; kind: TaskKind; result_file: string }>(sql`
          select t.id, t.kind, t.result_file from tasks t
          where ${prunable(study.studyKey, group, cutoff)}
          order by t.created_at limit ${batchSize}`);
        if (batch.length === 0) break;
        const removed = await removeBatch(db, options, [...batch]);
        if (group === "timer") count.timerTicks += removed.tasks;
        else count.tasks += removed.tasks;
        count.files += removed.files;
        removedSoFar += removed.tasks;
        options.onProgress?.(removedSoFar);
        if (batch.length < batchSize) break;
      }
    }
  }
  return summarise(counts, true);
}

async function removeBatch(
  db: Database,
  options: PruneOptions,
  batch: { id: string; kind: TaskKind; result_file: string }[],
): Promise<{ tasks: number; files: number }> {
  // Result documents first: a round killed after this leaves rows the next round removes again.
  for (const task of batch) {
    if (task.result_file === "" || task.kind.startsWith("export-")) continue;
    const full = resultDocumentPath(options.resultDir, task.result_file);
    if (full !== null) await rm(full, { force: true });
  }
  const ids = batch.map((task) => task.id);
  return db.transaction(async (tx) => {
    const files = await tx.select().from(storedFiles).where(inArray(storedFiles.taskId, ids));
    // Their contents went when they expired; this removes whatever a store still holds (a
    // filesystem folder), and the parts' rows go with the records.
    for (const file of files) await options.files.removeContents(tx, file);
    const removedFiles = files.length
      ? await tx.delete(storedFiles).where(inArray(storedFiles.taskId, ids)).returning({ id: storedFiles.id })
      : [];
    const removed = await tx
      .delete(tasks)
      .where(and(inArray(tasks.id, ids), inArray(tasks.status, [...FINISHED_TASK_STATUSES])))
      .returning({ id: tasks.id });
    return { tasks: removed.length, files: removedFiles.length };
  });
}
