import type { AccountDeletionJob, MaintenanceJob, OutboxJob, TimerJob } from "@studyflow/queue";
import { scheduledEmailsSchedule } from "./scheduled-emails";
import type { ClusterSchedule } from "./upsert-schedules";

/**
 * How often a stale task is looked for. Running chunks touch their task every batch (~50 ms) and
 * a task is only stale after five minutes of silence, so once a minute finds it soon enough.
 */
export const SWEEP_STALE_TASKS_EVERY_MS = 60_000;

/**
 * How often temporary participants past retention are removed. Retention is counted in days;
 * hourly keeps the delete small without letting expired data linger.
 */
export const EXPIRE_TEMPORARY_EVERY_MS = 60 * 60_000;

/**
 * How often the daily exports are looked at. A day is exported once whatever the frequency (the
 * (study, survey, day) row is claimed with the task), so a round that finds the day done costs one
 * insert attempt per survey. Hourly means yesterday's files exist by 01:00 UTC, and a cluster that
 * was down at midnight catches up within the hour after it is back.
 */
export const DAILY_EXPORTS_EVERY_MS = 60 * 60_000;

/** How often export files past retention are removed; retention is counted in days. */
export const REMOVE_EXPIRED_EXPORTS_EVERY_MS = 60 * 60_000;

/**
 * How often finished tasks past retention are removed. Retention is counted in days; hourly keeps
 * each round small (an hourly study's tick a round), where a daily round would remove a day's worth.
 */
export const PRUNE_FINISHED_TASKS_EVERY_MS = 60 * 60_000;

/**
 * How often ended management sign-in sessions are removed. An ended session opens nothing already
 * (its end is checked on every request); removing it only stops its sealed refresh token from
 * staying in the database. Sessions last hours, so hourly keeps each round to a small batch. The
 * same round erases new API keys' sealed copies past their 10-minute reveal window (never shown
 * already): a copy its creator never listed stays an hour at most.
 */
export const SWEEP_MANAGEMENT_SESSIONS_EVERY_MS = 60 * 60_000;

/**
 * How often expired one-time account tokens are removed. An expired token is refused already;
 * removing it only keeps the table to the links still usable. Links live hours to days, so hourly
 * keeps each round small.
 */
export const SWEEP_EXPIRED_ACCOUNT_TOKENS_EVERY_MS = 60 * 60_000;

export const MAINTENANCE_SCHEDULES: readonly ClusterSchedule<MaintenanceJob>[] = [
  scheduledEmailsSchedule(),
  {
    id: "sweep-management-sessions",
    every: SWEEP_MANAGEMENT_SESSIONS_EVERY_MS,
    data: { kind: "sweep-management-sessions" },
  },
  {
    id: "sweep-expired-account-tokens",
    every: SWEEP_EXPIRED_ACCOUNT_TOKENS_EVERY_MS,
    data: { kind: "sweep-expired-account-tokens" },
  },
  { id: "start-daily-exports", every: DAILY_EXPORTS_EVERY_MS, data: { kind: "start-daily-exports" } },
  {
    id: "remove-expired-exports",
    every: REMOVE_EXPIRED_EXPORTS_EVERY_MS,
    data: { kind: "remove-expired-exports" },
  },
  {
    id: "prune-finished-tasks",
    every: PRUNE_FINISHED_TASKS_EVERY_MS,
    data: { kind: "prune-finished-tasks" },
  },
  { id: "sweep-stale-tasks", every: SWEEP_STALE_TASKS_EVERY_MS, data: { kind: "sweep-stale-tasks" } },
  {
    id: "expire-temporary-participants",
    every: EXPIRE_TEMPORARY_EVERY_MS,
    data: { kind: "expire-temporary-participants" },
  },
];

export const outboxSchedule = (pollIntervalMs: number): ClusterSchedule<OutboxJob> => ({
  id: "deliver-due-messages",
  every: pollIntervalMs,
  data: { kind: "deliver-due-messages" },
});

/**
 * How often the study timer looks for due ticks. A tick starts at most this late after its slot
 * begins; once a minute matches the shortest interval (MIN_TIMER_INTERVAL_SECONDS) and costs one
 * query over the studies per minute.
 */
export const TIMER_SCAN_EVERY_MS = 60_000;

export const studyTimerSchedule = (scanEveryMs: number): ClusterSchedule<TimerJob> => ({
  id: "start-due-timer-ticks",
  every: scanEveryMs,
  data: { kind: "start-due-ticks" },
});

/**
 * How often account deletions whose job was lost are looked for. A lost job is rare (the API died
 * between commit and enqueue, or every retry failed); a deletion a few minutes late is no harm,
 * and a failing one is retried at this pace rather than hammering what makes it fail.
 */
export const SWEEP_ACCOUNT_DELETIONS_EVERY_MS = 5 * 60_000;

export const ACCOUNT_DELETION_SCHEDULES: readonly ClusterSchedule<AccountDeletionJob>[] = [
  {
    id: "sweep-account-deletions",
    every: SWEEP_ACCOUNT_DELETIONS_EVERY_MS,
    data: { kind: "sweep-account-deletions" },
  },
];
