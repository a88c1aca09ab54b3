/**
 * When a study's timer ticks. Time is cut into slots of `interval` seconds, shifted by `offset`
 * from the Unix epoch's grid: the slot of an instant starts at
 * `floor((now - offset) / interval) * interval + offset`. A study gets at most one tick per slot,
 * due at the slot's start; a slot missed while no worker ran is not made up for (the current
 * slot's tick does the housekeeping).
 */

/**
 * The workers' default interval (TIMER_INTERVAL_SECONDS): hourly, as the reference platform's
 * timer runs. Studies that need finer housekeeping set their own.
 */
export const DEFAULT_TIMER_INTERVAL_SECONDS = 3_600;

/**
 * The shortest interval. A tick is a pass over every participant of the study, found by a scan
 * that runs once a minute: ticks closer together than the scan could not be kept.
 */
export const MIN_TIMER_INTERVAL_SECONDS = 60;

/**
 * The longest interval and offset. Housekeeping that waits longer than a week for its pass (expiring
 * surveys, deleting contact data after a delay) would be late by days; the rules compare dates themselves.
 */
export const MAX_TIMER_INTERVAL_SECONDS = 7 * 86_400;

/**
 * The bounds and default of TIMER_INTERVAL_SECONDS (packages/config's timerSettings), which the
 * worker, the API and the CLI all read: the same as a study's own interval.
 */
export const TIMER_INTERVAL_BOUNDS = {
  min: MIN_TIMER_INTERVAL_SECONDS,
  max: MAX_TIMER_INTERVAL_SECONDS,
  fallback: DEFAULT_TIMER_INTERVAL_SECONDS,
} as const;

/** A study's tick schedule: its own interval, or the workers' default. */
export interface TimerSchedule {
  intervalSeconds: number;
  offsetSeconds: number;
  /** True when intervalSeconds is the workers' default rather than the study's own. */
  defaultInterval: boolean;
}

/** The start (Unix seconds) of the slot that holds `nowSeconds`; an offset of an interval or more wraps. */
export function slotStartSeconds(nowSeconds: number, intervalSeconds: number, offsetSeconds: number): number {
  const offset = ((offsetSeconds % intervalSeconds) + intervalSeconds) % intervalSeconds;
  return Math.floor((nowSeconds - offset) / intervalSeconds) * intervalSeconds + offset;
}

/** The slot due now (its start, as a Date) for the schedule, at `nowMs`. */
export function currentSlot(nowMs: number, schedule: TimerSchedule): Date {
  const start = slotStartSeconds(Math.floor(nowMs / 1000), schedule.intervalSeconds, schedule.offsetSeconds);
  return new Date(start * 1000);
}
