import { z } from "@hono/zod-openapi";
import { TASK_KINDS, TASK_STATUSES, type RunActionsInput } from "@studyflow/db";
import { isTimerTask, type StudyTaskRetention, type TaskRow, type TimerTaskRow } from "@studyflow/domain/tasks";
import { type StudyTimerState } from "@studyflow/domain/timer";

/** The Task of the interface: timestamps as ISO 8601 strings. */
export const taskSchema = z
  .object({
    id: z.string(),
    kind: z.enum(TASK_KINDS).openapi({
      description:
        "run-actions: a researcher's rules over every participant; timer: one tick of the study timer; " +
        "export-responses, export-participants, export-reports: a study's data written into a file",
    }),
    createdAt: z.string().openapi({ format: "date-time" }),
    createdBy: z.string().openapi({ description: 'the researcher; "study-timer" for timer ticks' }),
    updatedAt: z.string().openapi({ format: "date-time" }),
    status: z.enum(TASK_STATUSES).openapi({
      description: "skipped: a timer tick that fell due while another bulk task of the study ran; it never ran",
    }),
    targetCount: z.number().int(),
    processedCount: z.number().int(),
    resultFile: z.string(),
    fileType: z.string(),
    error: z.string(),
  })
  .openapi("Task");

/** How the task routes answer (and what each task event carries). */
export const taskEnvelope = z.object({ task: taskSchema });

export type ApiTask = z.infer<typeof taskSchema>;

export function presentTask(row: TaskRow): ApiTask {
  return {
    id: row.id,
    kind: row.kind,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    updatedAt: row.updatedAt.toISOString(),
    status: row.status,
    targetCount: row.targetCount,
    processedCount: row.processedCount,
    resultFile: row.resultFile,
    fileType: row.fileType,
    error: row.error,
  };
}

/** A timer tick: its task, the slot it fell due for and the rules version it ran. */
export const timerTickSchema = z
  .object({
    dueAt: z.string().openapi({ format: "date-time", description: "the start of the tick's slot" }),
    rulesVersion: z.number().int(),
    task: taskSchema,
  })
  .openapi("TimerTick");

export function presentTimerTick(row: TimerTaskRow): z.infer<typeof timerTickSchema> {
  return { dueAt: row.input.dueAt, rulesVersion: row.input.rulesVersion, task: presentTask(row) };
}

export const studyTimerSchema = z
  .object({
    studyKey: z.string(),
    intervalSeconds: z.number().int().nullable().openapi({
      description: "the study's own interval; null: the default (defaultIntervalSeconds)",
    }),
    offsetSeconds: z.number().int().openapi({ description: "shift of the slots from the epoch's grid" }),
    paused: z.boolean(),
    effectiveIntervalSeconds: z.number().int().openapi({ description: "the interval ticks fall due at" }),
    defaultIntervalSeconds: z.number().int().openapi({
      description:
        "TIMER_INTERVAL_SECONDS: the interval of every study that sets none (the API reads it as the workers do)",
    }),
    handlesTimer: z.boolean().openapi({
      description:
        'the study\'s current rules could act on a TIMER event (a condition naming checkEventType("TIMER") that ' +
        "can hold, or a rule not guarded by an event-type check); without, the study gets no ticks",
    }),
    studyActive: z.boolean(),
    lastTick: timerTickSchema.nullable(),
    nextTickAt: z.string().nullable().openapi({
      format: "date-time",
      description:
        "the slot start the next tick falls due at (past when dueNow); null while paused, inactive or without TIMER rules",
    }),
    dueNow: z
      .boolean()
      .openapi({ description: "the current slot has no tick yet: the next scan, within a minute, starts it" }),
    updatedBy: z.string().nullable(),
    updatedAt: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("StudyTimer");

export const studyTimerEnvelope = z.object({ timer: studyTimerSchema });

export function presentStudyTimer(state: StudyTimerState): z.infer<typeof studyTimerSchema> {
  return {
    studyKey: state.studyKey,
    intervalSeconds: state.intervalSeconds,
    offsetSeconds: state.offsetSeconds,
    paused: state.paused,
    effectiveIntervalSeconds: state.effectiveIntervalSeconds,
    defaultIntervalSeconds: state.defaultIntervalSeconds,
    handlesTimer: state.handlesTimer,
    studyActive: state.studyActive,
    lastTick: state.lastTick ? presentTimerTick(state.lastTick) : null,
    nextTickAt: state.nextTickAt?.toISOString() ?? null,
    dueNow: state.dueNow,
    updatedBy: state.updatedBy,
    updatedAt: state.updatedAt?.toISOString() ?? null,
  };
}

/** A task as the task list shows it: the Task, when it ran, and what kind of run it was. */
export const taskListItemSchema = taskSchema
  .extend({
    startedAt: z.string().nullable().openapi({ format: "date-time", description: "null until a worker takes it" }),
    finishedAt: z.string().nullable().openapi({ format: "date-time", description: "null until it ends" }),
    dryRun: z.boolean().openapi({ description: "a run-actions dry run (evaluated and counted, nothing written)" }),
    tick: z
      .object({ dueAt: z.string().openapi({ format: "date-time" }), rulesVersion: z.number().int() })
      .nullable()
      .openapi({ description: "a timer tick's slot and the study rules version it runs; null for run-actions" }),
  })
  .openapi("TaskListItem");

export function presentTaskListItem(row: TaskRow): z.infer<typeof taskListItemSchema> {
  const tick = isTimerTask(row) ? { dueAt: row.input.dueAt, rulesVersion: row.input.rulesVersion } : null;
  return {
    ...presentTask(row),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    dryRun: !isTimerTask(row) && (row.input as RunActionsInput).dryRun === true,
    tick,
  };
}

const retentionDays = (description: string) =>
  z
    .number()
    .int()
    .nullable()
    .openapi({ description: `${description}; null: the default; 0 keeps forever` });

/** A study's retention of finished tasks, with the defaults it falls back on. */
export const studyTaskRetentionSchema = z
  .object({
    studyKey: z.string(),
    days: retentionDays("the study's own days for finished run-actions and export tasks"),
    timerDays: retentionDays("the study's own days for finished timer ticks"),
    effectiveDays: z
      .number()
      .int()
      .openapi({ description: "what applies to run-actions and export tasks; 0: forever" }),
    effectiveTimerDays: z.number().int().openapi({ description: "what applies to timer ticks; 0: forever" }),
    defaultDays: z.number().int().openapi({ description: "TASK_RETENTION_DAYS; 0: forever" }),
    defaultTimerDays: z.number().int().openapi({ description: "TIMER_TASK_RETENTION_DAYS; 0: forever" }),
    updatedBy: z.string().nullable(),
    updatedAt: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("StudyTaskRetention");

export const studyTaskRetentionEnvelope = z.object({ taskRetention: studyTaskRetentionSchema });

export function presentStudyTaskRetention(state: StudyTaskRetention): z.infer<typeof studyTaskRetentionSchema> {
  return { ...state, updatedAt: state.updatedAt?.toISOString() ?? null };
}
