import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import {
  STATUSES_EXCLUDED_FROM_BULK,
  studyParticipantCounts,
  tasks,
  type Database,
  type Executor,
  type PreviousResponsesInput,
  type RunActionsInput,
  type TaskStatus,
} from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import type { ManagementSubject } from "../access/permissions";
import { Conflict, Forbidden, NotFound, Unavailable } from "../errors";
import { getStudy } from "../studies/study-repository";
import type { TaskRow } from "./task-row";
import { isTimerTask } from "./task-rules";
export {
  TASK_RETENTION_DEFAULTS,
  checkStudyTaskRetentionChange,
  getStudyTaskRetention,
  updateStudyTaskRetention,
  type StudyTaskRetention,
  type StudyTaskRetentionChange,
  type TaskRetentionDefaults,
} from "./study-task-retention";
export {
  FINISHED_TASK_STATUSES,
  PRUNE_BATCH_SIZE,
  countPrunableTasks,
  pruneFinishedTasks,
  type PruneOptions,
  type PruneSummary,
  type StudyPruneCount,
} from "./prune-finished-tasks";

export type { TaskRow } from "./task-row";

export {
  TIMER_TASK_CREATOR,
  isTimerTask,
  taskRuleSet,
  type RunActionsTaskRow,
  type TaskRuleSet,
  type TimerTaskRow,
} from "./task-rules";

/** Bulk runs skip deleted accounts and anonymous pre-registrations, as participant events do. */
export const EXCLUDED_FROM_BULK = STATUSES_EXCLUDED_FROM_BULK;

/** Statuses a task never leaves: `skipped` is a timer tick that never ran (see timer/). */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ["completed", "failed", "canceled", "skipped"];

/** One indexed read of the trigger-maintained counts, however large the study. */
export async function countEligibleParticipants(db: Executor, studyKey: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`coalesce(sum(${studyParticipantCounts.count}), 0)::int` })
    .from(studyParticipantCounts)
    .where(
      and(
        eq(studyParticipantCounts.studyKey, studyKey),
        notInArray(studyParticipantCounts.studyStatus, [...EXCLUDED_FROM_BULK]),
      ),
    );
  return row?.count ?? 0;
}

export interface CreateRunActionsTaskInput {
  studyKey: string;
  /** Already validated by the engine's validator. */
  rules: unknown[];
  dryRun: boolean;
  createdBy: string;
}

/** The rule-running kinds a researcher starts over a study's participants, each with the input it stores. */
export type QueuedRuleTask =
  | { kind: "run-actions"; input: RunActionsInput }
  | { kind: "run-actions-previous-responses"; input: PreviousResponsesInput };

/**
 * Records a queued task of a rule-running kind over the study's eligible participants, then hands
 * it to the queue. The task commits first so the worker always finds it; if the queue refuses, the
 * task is marked failed and the caller gets a 503.
 */
export async function createQueuedRuleTask(
  db: Database,
  target: { studyKey: string; createdBy: string },
  task: QueuedRuleTask,
  enqueue: (taskId: string) => Promise<void>,
  ctx: ClockContext,
): Promise<TaskRow> {
  await getStudy(db, target.studyKey);
  const targetCount = await countEligibleParticipants(db, target.studyKey);
  const [row] = await db
    .insert(tasks)
    .values({ ...target, kind: task.kind, input: task.input, status: "queued", targetCount })
    .returning();
  if (!row) throw new Error("task insert returned nothing");
  try {
    await enqueue(row.id);
  } catch {
    const now = new Date(ctx.clock());
    await db
      .update(tasks)
      .set({ status: "failed", error: "the job queue was unavailable", updatedAt: now, finishedAt: now })
      .where(eq(tasks.id, row.id));
    throw new Unavailable("the job queue is unavailable; try again shortly");
  }
  return row;
}

/** Records a run-actions task and queues it (createQueuedRuleTask). */
export async function createRunActionsTask(
  db: Database,
  input: CreateRunActionsTaskInput,
  enqueue: (taskId: string) => Promise<void>,
  ctx: ClockContext,
): Promise<TaskRow> {
  return createQueuedRuleTask(
    db,
    { studyKey: input.studyKey, createdBy: input.createdBy },
    { kind: "run-actions", input: { rules: input.rules, dryRun: input.dryRun } },
    enqueue,
    ctx,
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A task of this study that the caller may see: its creator or an admin; a timer tick, anyone the route lets in. */
export async function getVisibleTask(
  db: Executor,
  studyKey: string,
  taskId: string,
  who: ManagementSubject,
): Promise<TaskRow> {
  if (!UUID.test(taskId)) throw new NotFound(`task "${taskId}" not found`);
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.studyKey, studyKey)))
    .limit(1);
  if (!row) throw new NotFound(`task "${taskId}" not found`);
  // A timer tick has no person behind it: whoever may run bulk actions on the study sees its ticks.
  if (!who.isAdmin && row.createdBy !== who.subject && !isTimerTask(row))
    throw new Forbidden("only the task's creator or an admin may see it");
  return row;
}

/**
 * Marks a running or queued task canceled; the worker stops after the batch in flight. The caller
 * has checked that `who` may see the task (getVisibleTask).
 */
export async function cancelTask(
  db: Executor,
  task: TaskRow,
  who: ManagementSubject,
  ctx: ClockContext,
): Promise<TaskRow> {
  const now = new Date(ctx.clock());
  const [row] = await db
    .update(tasks)
    .set({ status: "canceled", updatedAt: now, finishedAt: now, error: `canceled by ${who.subject}` })
    .where(and(eq(tasks.id, task.id), inArray(tasks.status, ["queued", "in_progress"])))
    .returning();
  if (row) return row;
  // Ended before, or meanwhile: say how.
  const [current] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, task.id));
  throw new Conflict(`task is already ${current?.status ?? task.status}`);
}
