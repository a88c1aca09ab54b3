import { and, eq, inArray, sql } from "drizzle-orm";
import { rawClientOf, taskChunks, tasks, type Database, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import type { FileStore } from "../files/file-store";
import { createPostgresFileStore } from "../files/postgres-file-store";
import type { TaskRow } from "../tasks/task-row";
import { lockedTaskRow } from "./locked-task-row";
import { PARTICIPANT_WRITING_KINDS, taskKindOf } from "./task-kinds";

export interface PlannedChunk {
  chunkIndex: number;
  status: "pending" | "done";
}

export type PlanOutcome =
  | { status: "planned"; task: TaskRow; chunks: PlannedChunk[] }
  /** Another task of the same study runs (or was queued earlier): try again later. */
  | { status: "busy" }
  /** A timer tick found another task of its study ahead of it: it is recorded as skipped, never run. */
  | { status: "skipped"; reason: string }
  /** The task is gone or has ended. */
  | { status: "ended" };

/**
 * Serialises, until the transaction ends, everything that decides which bulk task of a study runs:
 * planners, the creation of timer ticks, and changes of the study's timer.
 */
export async function lockStudyBulkTasks(tx: Executor, studyKey: string): Promise<void> {
  await rawClientOf(tx)`select pg_advisory_xact_lock(hashtext(${`bulk-tasks:${studyKey}`}))`;
}

/** The participant-writing kinds as a PostgreSQL array literal (kind names need no quoting). */
const writingKindsArray = () => `{${PARTICIPANT_WRITING_KINDS.join(",")}}`;

/** Why a timer tick did not run, naming the task it would have overlapped. */
export function skipReason(other: { id: string; kind: string; status: string }): string {
  const running = other.status === "in_progress" ? "running" : "queued";
  return `skipped: ${other.kind} task ${other.id} of the study was ${running}`;
}

/**
 * Starts a task: marks it in_progress and splits its rows into contiguous key ranges over its
 * kind's key space (task-kinds.ts). Idempotent: a planner that runs again (after a crash) finds
 * the chunks already there.
 *
 * One participant-writing task per study runs at a time, in the order they were created: two rule
 * sets interleaving batch by batch over the same participants would leave states no researcher
 * asked for. Planners of one study are serialised by an advisory lock, so two cannot both see the
 * study free. A kind that skips when busy (a timer tick) is recorded as skipped instead of waiting.
 * Exports only read: they neither wait nor make anyone wait.
 */
export async function planTask(
  db: Database,
  taskId: string,
  options: ClockContext & { chunkSize?: number; files?: FileStore },
): Promise<PlanOutcome> {
  const { chunkSize } = options;
  const files = options.files ?? createPostgresFileStore(db);
  // Every statement here is prepared once per connection (drizzle's named statements, postgres.js's
  // tagged ones): one round trip each, where an unprepared one describes itself first. Planning is
  // serial work before any chunk starts, and on a busy machine each round trip waits its turn.
  return db.transaction(async (tx): Promise<PlanOutcome> => {
    const task = await lockedTaskRow(tx, taskId);
    if (!task || !["queued", "in_progress"].includes(task.status)) return { status: "ended" };
    const kind = taskKindOf(task.kind);
    if (task.status === "queued" && kind.writesParticipants) {
      await lockStudyBulkTasks(tx, task.studyKey);
      const [ahead] = await rawClientOf(tx)<{ id: string; kind: string; status: string }[]>`
        select id, kind, status from tasks
        where study_key = ${task.studyKey} and id <> ${task.id}
          and kind = any(${writingKindsArray()}::text[])
          and (status = 'in_progress' or (status = 'queued' and created_at < (select created_at from tasks where id = ${task.id})))
        limit 1`;
      if (ahead && kind.skipWhenBusy) {
        const reason = skipReason(ahead);
        const now = new Date(options.clock());
        await tx
          .update(tasks)
          .set({ status: "skipped", error: reason, updatedAt: now, finishedAt: now })
          .where(eq(tasks.id, task.id));
        return { status: "skipped", reason };
      }
      if (ahead) return { status: "busy" };
    }
    const existing = await tx
      .select({ chunkIndex: taskChunks.chunkIndex, status: taskChunks.status })
      .from(taskChunks)
      .where(eq(taskChunks.taskId, sql.placeholder("taskId")))
      .orderBy(taskChunks.chunkIndex)
      .prepare("plan_task_chunks")
      .execute({ taskId });
    if (existing.length > 0) return { status: "planned", task, chunks: existing };

    const plan = await kind.plan(tx, task, chunkSize ?? kind.chunkSize);
    const { boundaries } = plan;
    // Chunk i covers (boundary[i-1], boundary[i]]; the last one is open-ended so late arrivals are included.
    const ranges = [...boundaries, null].map((toKey, index) => ({
      taskId,
      chunkIndex: index,
      fromKey: index === 0 ? "" : (boundaries[index - 1] ?? ""),
      toKey,
      cursor: index === 0 ? "" : (boundaries[index - 1] ?? ""),
    }));
    // one statement text per number of chunks, each prepared once per connection
    await tx.insert(taskChunks).values(ranges).prepare("plan_task_insert_chunks").execute();
    await kind.afterPlan?.(tx, task, ranges.length, files);
    const now = new Date(options.clock());
    const [started] = await tx
      .update(tasks)
      .set({ status: "in_progress", startedAt: task.startedAt ?? now, updatedAt: now, targetCount: plan.targetCount })
      .where(and(eq(tasks.id, taskId), inArray(tasks.status, ["queued", "in_progress"])))
      .returning()
      .prepare("plan_task_start")
      .execute();
    return {
      status: "planned",
      task: started ?? task,
      chunks: ranges.map((chunk) => ({ chunkIndex: chunk.chunkIndex, status: "pending" as const })),
    };
  });
}
