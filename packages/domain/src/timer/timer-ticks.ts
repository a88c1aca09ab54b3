import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { rulesHandleEvent } from "@studyflow/engine";
import { studyRules, tasks, type Database, type Executor, type TimerTickInput } from "@studyflow/db";
import { lockStudyBulkTasks, skipReason } from "../task-pipeline/plan-task";
import { storedRowId, storedRulesKey } from "../rules/study-rules";
import { Invalid } from "../errors";
import { decodePageCursor, encodePageCursor, invalidCursor, type Page } from "../study-config/page-cursor";
import { getStudy } from "../studies/study-repository";
import { TIMER_TASK_CREATOR, isTimerTask, type TimerTaskRow } from "../tasks/task-rules";
import { countEligibleParticipants } from "../tasks/task-service";
import { currentSlot, type TimerSchedule } from "./timer-schedule";

/**
 * Whether a stored rules version handles TIMER, by stored row (storedRulesKey). A version never
 * changes once stored, so an entry never goes stale; the scan asks once a minute for every study.
 */
const handlesTimerCache = new Map<string, boolean>();
const HANDLES_CACHE_LIMIT = 1_024;

/** Whether the study's rules version handles TIMER (engine's rulesHandleEvent); false when it does not exist. */
export async function rulesVersionHandlesTimer(db: Executor, studyKey: string, version: number): Promise<boolean> {
  const ofVersion = and(eq(studyRules.studyKey, studyKey), eq(studyRules.version, version));
  const [row] = await db.select({ stored: storedRowId }).from(studyRules).where(ofVersion).limit(1);
  if (!row) return false;
  const cacheKey = storedRulesKey(studyKey, version, row.stored);
  const cached = handlesTimerCache.get(cacheKey);
  if (cached !== undefined) return cached;
  const [stored] = await db.select({ rules: studyRules.rules }).from(studyRules).where(ofVersion).limit(1);
  if (!stored) return false;
  const handles = rulesHandleEvent(stored.rules, "TIMER");
  if (handlesTimerCache.size >= HANDLES_CACHE_LIMIT) handlesTimerCache.clear();
  handlesTimerCache.set(cacheKey, handles);
  return handles;
}

/**
 * The study's latest tick, whatever its status. Ticks are created in slot order under the study's
 * lock, each stamped with the clock at its insert, so the latest created is the latest slot.
 */
export async function lastTimerTick(db: Executor, studyKey: string): Promise<TimerTaskRow | null> {
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.studyKey, studyKey), eq(tasks.kind, "timer")))
    .orderBy(desc(tasks.createdAt))
    .limit(1);
  return row && isTimerTask(row) ? row : null;
}

/** A study whose current slot has no tick yet, and what its tick would run. */
export interface DueTick {
  studyKey: string;
  dueAt: Date;
  rulesVersion: number;
  schedule: TimerSchedule;
}

interface TimerCandidate extends Record<string, unknown> {
  study_key: string;
  interval_seconds: number | null;
  offset_seconds: number;
  rules_version: number | null;
  last_due_at: string | null;
}

/**
 * The studies with a tick due at `nowMs`: active, timer not paused, current rules handling TIMER,
 * and no tick yet for the slot that holds `nowMs` (a tick of that slot or a later one, skipped
 * ones included). One query for every study with rules; the TIMER check is cached per rules version.
 */
export async function findDueTimerTicks(
  db: Executor,
  nowMs: number,
  defaultIntervalSeconds: number,
): Promise<DueTick[]> {
  const rows = await db.execute<TimerCandidate>(sql`
    select s.key as study_key, t.interval_seconds, coalesce(t.offset_seconds, 0) as offset_seconds,
      (select max(r.version) from study_rules r where r.study_key = s.key) as rules_version,
      (select x.input ->> 'dueAt' from tasks x where x.study_key = s.key and x.kind = 'timer'
        order by x.created_at desc limit 1) as last_due_at
    from studies s
    left join study_timers t on t.study_key = s.key
    where s.status = 'active' and not coalesce(t.paused, false)
    order by s.key`);
  const due: DueTick[] = [];
  for (const row of rows) {
    if (row.rules_version === null) continue;
    const schedule: TimerSchedule = {
      intervalSeconds: row.interval_seconds ?? defaultIntervalSeconds,
      offsetSeconds: Number(row.offset_seconds),
      defaultInterval: row.interval_seconds === null,
    };
    const dueAt = currentSlot(nowMs, schedule);
    if (row.last_due_at !== null && Date.parse(row.last_due_at) >= dueAt.getTime()) continue;
    const rulesVersion = Number(row.rules_version);
    if (!(await rulesVersionHandlesTimer(db, row.study_key, rulesVersion))) continue;
    due.push({ studyKey: row.study_key, dueAt, rulesVersion, schedule });
  }
  return due;
}

export type TickCreation =
  | { status: "queued" | "skipped"; task: TimerTaskRow }
  /** Another scan got there first, or the timer was paused or the study deactivated meanwhile. */
  | { status: "not-due" };

/**
 * Records the tick of a slot as a Task, once: under the study's bulk-task lock, the slot is
 * checked again, so two scans (two workers, a repeated job) never record two ticks for one slot.
 * If another bulk task of the study is queued or running, the tick is recorded as `skipped` and
 * never runs: ticks do not queue up behind a long run.
 */
export async function createTimerTick(db: Database, tick: DueTick): Promise<TickCreation> {
  return db.transaction(async (tx): Promise<TickCreation> => {
    await lockStudyBulkTasks(tx, tick.studyKey);
    // Pauses and status changes that committed while this scan ran are seen here: a paused timer
    // (its change takes the same lock) gets no tick from now on.
    const [state] = await tx.execute<{ status: string; paused: boolean | null }>(sql`
      select s.status, t.paused from studies s left join study_timers t on t.study_key = s.key
      where s.key = ${tick.studyKey}`);
    if (!state || state.status !== "active" || state.paused === true) return { status: "not-due" };
    const last = await lastTimerTick(tx, tick.studyKey);
    if (last && Date.parse(last.input.dueAt) >= tick.dueAt.getTime()) return { status: "not-due" };

    const [ahead] = await tx
      .select({ id: tasks.id, kind: tasks.kind, status: tasks.status })
      .from(tasks)
      .where(and(eq(tasks.studyKey, tick.studyKey), inArray(tasks.status, ["queued", "in_progress"])))
      .orderBy(tasks.createdAt)
      .limit(1);
    const input: TimerTickInput = {
      dueAt: tick.dueAt.toISOString(),
      rulesVersion: tick.rulesVersion,
      intervalSeconds: tick.schedule.intervalSeconds,
      offsetSeconds: tick.schedule.offsetSeconds,
      defaultInterval: tick.schedule.defaultInterval,
    };
    const targetCount = await countEligibleParticipants(tx, tick.studyKey);
    const skipped = ahead
      ? { status: "skipped" as const, error: skipReason(ahead), finishedAt: sql`clock_timestamp()` }
      : {};
    const [row] = await tx
      .insert(tasks)
      .values({
        studyKey: tick.studyKey,
        kind: "timer",
        input,
        createdBy: TIMER_TASK_CREATOR,
        status: "queued",
        targetCount,
        // the insert's own instant, not the transaction's start: lastTimerTick orders by it
        createdAt: sql`clock_timestamp()`,
        updatedAt: sql`clock_timestamp()`,
        ...skipped,
      })
      .returning();
    if (!row || !isTimerTask(row)) throw new Error("timer task insert returned nothing");
    return { status: ahead ? "skipped" : "queued", task: row };
  });
}

export interface StartDueTicksOptions {
  /** Milliseconds since the epoch. */
  now: number;
  /** TIMER_INTERVAL_SECONDS: the interval of studies without their own. */
  defaultIntervalSeconds: number;
  /** Queues the task job of a tick; called once its row has committed. */
  enqueue: (taskId: string) => Promise<void>;
}

export interface StartedTick {
  studyKey: string;
  dueAt: Date;
  status: "queued" | "skipped";
  task: TimerTaskRow;
  /** Set when the job could not be queued; the stale-task sweeper queues it again later. */
  enqueueError?: string;
}

/**
 * One scan of the study timer: records the tick of every study that has one due and queues its
 * job. What one scan records, a concurrent or repeated scan does not record again. A study whose
 * tick cannot be recorded (its database work failed) does not hold up the others; the error is
 * raised after the scan so the job shows it.
 */
export async function startDueTimerTicks(db: Database, options: StartDueTicksOptions): Promise<StartedTick[]> {
  const due = await findDueTimerTicks(db, options.now, options.defaultIntervalSeconds);
  const started: StartedTick[] = [];
  const failures: unknown[] = [];
  for (const tick of due) {
    let created: TickCreation;
    try {
      created = await createTimerTick(db, tick);
    } catch (error) {
      failures.push(error);
      continue;
    }
    if (created.status === "not-due") continue;
    const entry: StartedTick = {
      studyKey: tick.studyKey,
      dueAt: tick.dueAt,
      status: created.status,
      task: created.task,
    };
    if (created.status === "queued") {
      try {
        await options.enqueue(created.task.id);
      } catch (error) {
        entry.enqueueError = error instanceof Error ? error.message : String(error);
      }
    }
    started.push(entry);
  }
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} due timer tick(s) could not be recorded`);
  return started;
}

/** The study's ticks, newest first, paged by their slot (each slot has at most one tick). */
export async function listTimerTicks(
  db: Executor,
  studyKey: string,
  page: { limit: number; cursor?: string },
): Promise<Page<TimerTaskRow>> {
  await getStudy(db, studyKey);
  let before: Date | undefined;
  if (page.cursor !== undefined) {
    const [dueAt] = decodePageCursor(page.cursor, ["string"]);
    before = new Date(String(dueAt));
    if (Number.isNaN(before.getTime()) || before.toISOString() !== dueAt) throw invalidCursor();
  }
  if (!Number.isSafeInteger(page.limit) || page.limit < 1)
    throw new Invalid("limit must be a whole number of at least 1");
  const rows = await db
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.studyKey, studyKey),
        eq(tasks.kind, "timer"),
        before === undefined
          ? undefined
          : sql`(${tasks.input} ->> 'dueAt')::timestamptz < ${before.toISOString()}::timestamptz`,
      ),
    )
    .orderBy(desc(tasks.createdAt))
    // one more than the page: whether it exists says if there is a next page
    .limit(page.limit + 1);
  const items = rows.filter(isTimerTask).slice(0, page.limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > page.limit && last ? encodePageCursor([last.input.dueAt]) : null,
  };
}
