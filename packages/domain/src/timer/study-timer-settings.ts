import { eq, sql } from "drizzle-orm";
import { studyTimers, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { lockStudyBulkTasks } from "../task-pipeline/plan-task";
import { Invalid } from "../errors";
import { getStudy } from "../studies/study-repository";
import type { TimerTaskRow } from "../tasks/task-rules";
import {
  DEFAULT_TIMER_INTERVAL_SECONDS,
  MAX_TIMER_INTERVAL_SECONDS,
  MIN_TIMER_INTERVAL_SECONDS,
  slotStartSeconds,
} from "./timer-schedule";
import { lastTimerTick, rulesVersionHandlesTimer } from "./timer-ticks";

/** A study's timer as management sees it. */
export interface StudyTimerState {
  studyKey: string;
  /** The study's own interval; null: the default (TIMER_INTERVAL_SECONDS). */
  intervalSeconds: number | null;
  offsetSeconds: number;
  paused: boolean;
  /** The interval ticks fall due at: the study's own, else the default. */
  effectiveIntervalSeconds: number;
  /** TIMER_INTERVAL_SECONDS: the interval of every study that sets none. */
  defaultIntervalSeconds: number;
  /** The study's current rules handle TIMER (engine's rulesHandleEvent); without, it gets no ticks. */
  handlesTimer: boolean;
  studyActive: boolean;
  /** The latest tick, whatever its status. */
  lastTick: TimerTaskRow | null;
  /**
   * The slot start the next tick falls due at; null while the study gets none: paused, inactive,
   * or rules without TIMER. In the past when the current slot has not ticked yet (`dueNow`).
   */
  nextTickAt: Date | null;
  /** The current slot has no tick yet: the next scan (within a minute) starts it. */
  dueNow: boolean;
  /** Who changed the timer last, and when; null while it has its defaults. */
  updatedBy: string | null;
  updatedAt: Date | null;
}

export interface TimerView {
  /** Milliseconds since the epoch. */
  now: number;
  /**
   * TIMER_INTERVAL_SECONDS, which the API, the CLI and the workers read alike (packages/config's
   * timerSettings); left out, its default (DEFAULT_TIMER_INTERVAL_SECONDS).
   */
  defaultIntervalSeconds?: number;
}

/** The timer of a study; NotFound for an unknown study. */
export async function getStudyTimer(db: Executor, studyKey: string, view: TimerView): Promise<StudyTimerState> {
  const study = await getStudy(db, studyKey);
  const [settings] = await db.select().from(studyTimers).where(eq(studyTimers.studyKey, studyKey)).limit(1);
  const [current] = await db.execute<{ version: number | null }>(
    sql`select max(version) as version from study_rules where study_key = ${studyKey}`,
  );
  const version = current?.version ?? null;
  const handlesTimer = version !== null && (await rulesVersionHandlesTimer(db, studyKey, Number(version)));
  const lastTick = await lastTimerTick(db, studyKey);
  const intervalSeconds = settings?.intervalSeconds ?? null;
  const offsetSeconds = settings?.offsetSeconds ?? 0;
  const paused = settings?.paused ?? false;
  const defaultIntervalSeconds = view.defaultIntervalSeconds ?? DEFAULT_TIMER_INTERVAL_SECONDS;
  const effectiveIntervalSeconds = intervalSeconds ?? defaultIntervalSeconds;
  const studyActive = study.status === "active";

  let nextTickAt: Date | null = null;
  let dueNow = false;
  if (studyActive && !paused && handlesTimer) {
    const slot = slotStartSeconds(Math.floor(view.now / 1000), effectiveIntervalSeconds, offsetSeconds);
    dueNow = lastTick === null || Date.parse(lastTick.input.dueAt) < slot * 1000;
    nextTickAt = new Date((dueNow ? slot : slot + effectiveIntervalSeconds) * 1000);
  }
  return {
    studyKey,
    intervalSeconds,
    offsetSeconds,
    paused,
    effectiveIntervalSeconds,
    defaultIntervalSeconds,
    handlesTimer,
    studyActive,
    lastTick,
    nextTickAt,
    dueNow,
    updatedBy: settings?.updatedBy ?? null,
    updatedAt: settings?.updatedAt ?? null,
  };
}

/** A change of a study's timer: an absent field stays as it is; a null interval returns to the default. */
export interface StudyTimerChange {
  intervalSeconds?: number | null;
  offsetSeconds?: number;
  paused?: boolean;
}

const wholeSecondsIn = (value: number, min: number, max: number) =>
  Number.isSafeInteger(value) && value >= min && value <= max;

/** Invalid naming the field, for input that did not pass an edge's own validation. */
export function checkStudyTimerChange(change: StudyTimerChange): void {
  const { intervalSeconds, offsetSeconds, paused } = change;
  if (intervalSeconds === undefined && offsetSeconds === undefined && paused === undefined) {
    throw new Invalid("give at least one of intervalSeconds, offsetSeconds, paused");
  }
  if (
    intervalSeconds !== undefined &&
    intervalSeconds !== null &&
    !wholeSecondsIn(intervalSeconds, MIN_TIMER_INTERVAL_SECONDS, MAX_TIMER_INTERVAL_SECONDS)
  ) {
    throw new Invalid(
      `intervalSeconds must be a whole number from ${MIN_TIMER_INTERVAL_SECONDS} to ${MAX_TIMER_INTERVAL_SECONDS}, or null for the default`,
    );
  }
  if (offsetSeconds !== undefined && !wholeSecondsIn(offsetSeconds, 0, MAX_TIMER_INTERVAL_SECONDS - 1)) {
    throw new Invalid(`offsetSeconds must be a whole number from 0 to ${MAX_TIMER_INTERVAL_SECONDS - 1}`);
  }
  if (paused !== undefined && typeof paused !== "boolean") throw new Invalid("paused must be true or false");
}

/**
 * Changes a study's timer and records it in the audit log, in one transaction: `timer.schedule.update`
 * (interval and offset, from and to), `timer.pause`, `timer.resume`; nothing for a change that
 * changes nothing. The change takes the study's bulk-task lock, so once it returns, no scan creates a
 * tick under the old settings: a paused timer gets no further tick (one already running goes on;
 * cancel it through its task). An offset must be less than the study's own interval; with the
 * default interval it is taken modulo whatever the default is.
 */
export async function updateStudyTimer(
  db: Database,
  studyKey: string,
  change: StudyTimerChange,
  actor: string,
  view: TimerView,
): Promise<StudyTimerState> {
  checkStudyTimerChange(change);
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    await lockStudyBulkTasks(tx, studyKey);
    const [before] = await tx.select().from(studyTimers).where(eq(studyTimers.studyKey, studyKey)).for("update");
    const from = {
      intervalSeconds: before?.intervalSeconds ?? null,
      offsetSeconds: before?.offsetSeconds ?? 0,
      paused: before?.paused ?? false,
    };
    const to = {
      intervalSeconds: change.intervalSeconds === undefined ? from.intervalSeconds : change.intervalSeconds,
      offsetSeconds: change.offsetSeconds ?? from.offsetSeconds,
      paused: change.paused ?? from.paused,
    };
    if (to.intervalSeconds !== null && to.offsetSeconds >= to.intervalSeconds) {
      throw new Invalid(
        `offsetSeconds (${to.offsetSeconds}) must be less than the interval (${to.intervalSeconds} seconds)`,
      );
    }
    const schedule: Record<string, { from: unknown; to: unknown }> = {};
    for (const field of ["intervalSeconds", "offsetSeconds"] as const) {
      if (from[field] !== to[field]) schedule[field] = { from: from[field], to: to[field] };
    }
    const entries = [
      ...(Object.keys(schedule).length > 0 ? [{ action: "timer.schedule.update", details: schedule }] : []),
      ...(from.paused !== to.paused ? [{ action: to.paused ? "timer.pause" : "timer.resume", details: {} }] : []),
    ];
    if (entries.length === 0) return;
    const now = new Date(view.now);
    await tx
      .insert(studyTimers)
      .values({ studyKey, ...to, updatedBy: actor, updatedAt: now })
      .onConflictDoUpdate({ target: studyTimers.studyKey, set: { ...to, updatedBy: actor, updatedAt: now } });
    for (const entry of entries) await recordAudit(tx, { studyKey, actor, ...entry });
  });
  return getStudyTimer(db, studyKey, view);
}
