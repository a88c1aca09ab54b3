import { eq } from "drizzle-orm";
import { studyTaskRetention, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid } from "../errors";
import { getStudy } from "../studies/study-repository";

/**
 * The defaults and bounds of task retention, read by packages/config's taskRetentionSettings
 * (TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS) and by a study's own setting alike.
 *
 * - 30 days for run-actions and export tasks: a month to look at a run's result or fetch an
 *   export again (export files are kept as long by EXPORT_RETENTION_DAYS).
 * - 7 days for timer ticks: an hourly study makes 24 a day, housekeeping nobody asked for; a week
 *   is enough to see what the last ticks did.
 * - At most ten years, as the export retention; 0 keeps forever.
 */
export const TASK_RETENTION_DEFAULTS = { days: 30, timerDays: 7, maxDays: 3_650 } as const;

/** The deployment's retention (TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS); 0 keeps forever. */
export interface TaskRetentionDefaults {
  days: number;
  timerDays: number;
}

/** A study's retention of finished tasks as management sees it. */
export interface StudyTaskRetention {
  studyKey: string;
  /** The study's own days for run-actions and export tasks; null: the default. 0 keeps forever. */
  days: number | null;
  /** The study's own days for timer ticks; null: the default. 0 keeps forever. */
  timerDays: number | null;
  /** What applies: the study's own, else the default; 0 keeps forever. */
  effectiveDays: number;
  effectiveTimerDays: number;
  /** The deployment's defaults. */
  defaultDays: number;
  defaultTimerDays: number;
  /** Who changed the study's retention last, and when; null while it has the defaults. */
  updatedBy: string | null;
  updatedAt: Date | null;
}

/** A change of a study's retention: an absent field stays; null returns to the default; 0 keeps forever. */
export interface StudyTaskRetentionChange {
  days?: number | null;
  timerDays?: number | null;
}

/** A study's retention; NotFound for an unknown study. */
export async function getStudyTaskRetention(
  db: Executor,
  studyKey: string,
  defaults: TaskRetentionDefaults,
): Promise<StudyTaskRetention> {
  await getStudy(db, studyKey);
  const [row] = await db.select().from(studyTaskRetention).where(eq(studyTaskRetention.studyKey, studyKey)).limit(1);
  const days = row?.days ?? null;
  const timerDays = row?.timerDays ?? null;
  return {
    studyKey,
    days,
    timerDays,
    effectiveDays: days ?? defaults.days,
    effectiveTimerDays: timerDays ?? defaults.timerDays,
    defaultDays: defaults.days,
    defaultTimerDays: defaults.timerDays,
    updatedBy: row?.updatedBy ?? null,
    updatedAt: row?.updatedAt ?? null,
  };
}

const RETENTION_RULE = `a whole number of days from 0 (keep forever) to ${TASK_RETENTION_DEFAULTS.maxDays}, or null for the default`;

/** Invalid naming the field, for input that did not pass an edge's own validation. */
export function checkStudyTaskRetentionChange(change: StudyTaskRetentionChange): void {
  if (change.days === undefined && change.timerDays === undefined) throw new Invalid("give days, timerDays or both");
  for (const field of ["days", "timerDays"] as const) {
    const value = change[field];
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || value < 0 || value > TASK_RETENTION_DEFAULTS.maxDays) {
      throw new Invalid(`${field} must be ${RETENTION_RULE}`);
    }
  }
}

/**
 * Changes a study's retention and records `task-retention.update` (each changed field, from and
 * to) in the audit log, in one transaction; a change that changes nothing records nothing. The
 * next retention round (hourly) applies it.
 */
export async function updateStudyTaskRetention(
  db: Database,
  studyKey: string,
  change: StudyTaskRetentionChange,
  actor: string,
  defaults: TaskRetentionDefaults,
  now: Date,
): Promise<StudyTaskRetention> {
  checkStudyTaskRetentionChange(change);
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [before] = await tx
      .select()
      .from(studyTaskRetention)
      .where(eq(studyTaskRetention.studyKey, studyKey))
      .for("update");
    const from = { days: before?.days ?? null, timerDays: before?.timerDays ?? null };
    const to = {
      days: change.days === undefined ? from.days : change.days,
      timerDays: change.timerDays === undefined ? from.timerDays : change.timerDays,
    };
    const details: Record<string, { from: number | null; to: number | null }> = {};
    for (const field of ["days", "timerDays"] as const) {
      if (from[field] !== to[field]) details[field] = { from: from[field], to: to[field] };
    }
    if (Object.keys(details).length === 0) return;
    await tx
      .insert(studyTaskRetention)
      .values({ studyKey, ...to, updatedBy: actor, updatedAt: now })
      .onConflictDoUpdate({ target: studyTaskRetention.studyKey, set: { ...to, updatedBy: actor, updatedAt: now } });
    await recordAudit(tx, { studyKey, actor, action: "task-retention.update", details });
  });
  return getStudyTaskRetention(db, studyKey, defaults);
}
