/**
 * The study timer's part of `npm run bench`: one tick (the TIMER event over every participant of
 * a seeded study) as the timer runs it, where 1% of the participants change: their weekly survey's
 * validUntil has passed, and the study's TIMER rule removes it, the reference's typical
 * housekeeping. The tick is recorded by the timer's own scan (startDueTimerTicks) and run by the
 * worker processes the run-actions part started; measured from the scan until the task completed.
 * Its floors: the same removal as one UPDATE, and split in two halves run at once on two connections.
 */
import type { Queue } from "bullmq";
import { createDb, type DbHandle } from "@studyflow/db";
import { setStudyRules } from "@studyflow/domain/study-setup";
import { lastTimerTick, startDueTimerTicks } from "@studyflow/domain/timer";
import type { Expression } from "@studyflow/engine";
import { taskJobOptions, taskJobId, taskJobName, type TaskJob } from "@studyflow/queue";
import { pollUntilCompleted } from "./task-completion";

const str = (value: string) => ({ dtype: "str", str: value });
const num = (value: number) => ({ dtype: "num", num: value });
const exp = (expression: Expression) => ({ dtype: "exp", exp: expression });
const call = (name: string, ...data: ReturnType<typeof str | typeof num | typeof exp>[]): Expression => ({
  name,
  data,
});

/** Removes the weekly survey once its validUntil has passed (as Influenzanet studies do on TIMER). */
export const expireWeeklyRules: Expression[] = [
  call(
    "IFTHEN",
    exp(call("checkEventType", str("TIMER"))),
    exp(
      call(
        "IF",
        exp(
          call(
            "and",
            exp(call("hasSurveyKeyAssigned", str("weekly"))),
            exp(
              call(
                "lt",
                exp(call("getSurveyKeyAssignedUntil", str("weekly"))),
                exp(call("timestampWithOffset", num(0))),
              ),
            ),
          ),
        ),
        exp(call("REMOVE_SURVEYS_BY_KEY", str("weekly"))),
      ),
    ),
  ),
];

/** Every 100th participant (by id) gets a weekly survey that expired in 2020; returns how many. */
async function expireOnePercent(db: DbHandle, studyKey: string): Promise<number> {
  const result = await db.sql`
    update participants set assigned_surveys = jsonb_build_array(
        jsonb_build_object('surveyKey', 'weekly', 'validFrom', 1500000000, 'validUntil', 1600000000, 'category', 'normal'),
        jsonb_build_object('surveyKey', 'monthly', 'validFrom', 1700000000, 'validUntil', 1800000000, 'category', 'optional'))
    where study_key = ${studyKey} and substring(participant_id from 2)::int % 100 = 0`;
  return result.count;
}

export interface TimerTickFigures {
  participants: number;
  /** Participants run through the TIMER event per second, scan to completed task. */
  rate: number;
  seconds: number;
  changedPerRule: number[];
  expired: number;
  /** The same change as one server-side UPDATE. */
  floorRate: number;
  /** The same UPDATE split at the middle participant, both halves at once on two connections. */
  twoConnectionFloorRate: number;
}

/** The 1% the tick changes: removes the expired weekly survey, on one connection or on part of the study. */
function expireUpdate(sql: DbHandle["sql"], studyKey: string, nowSeconds: number, part = sql``) {
  return sql`
    update participants set assigned_surveys = (
        select coalesce(jsonb_agg(s), '[]'::jsonb) from jsonb_array_elements(assigned_surveys) s
        where s ->> 'surveyKey' <> 'weekly'),
      modified_at = ${nowSeconds}, version = version + 1
    where study_key = ${studyKey} and study_status not in ('accountDeleted', 'temporary') ${part}
      and exists (select 1 from jsonb_array_elements(assigned_surveys) s
        where s ->> 'surveyKey' = 'weekly' and (s ->> 'validUntil')::bigint < ${nowSeconds})`;
}

/**
 * One tick over the study's `count` participants (the database at `databaseUrl`, for the
 * two-connection floor's own connections). `queue` is the tasks queue the workers consume; `readResult` fetches the tick's result document (through the API's task route).
 */
export async function benchTimerTick(
  db: DbHandle,
  databaseUrl: string,
  queue: Queue,
  studyKey: string,
  count: number,
  readResult: (taskId: string) => Promise<{ participantStateChangedPerRule: number[] }>,
): Promise<TimerTickFigures> {
  const expired = await expireOnePercent(db, studyKey);
  await db.sql`vacuum analyze participants`;
  await setStudyRules(db.db, studyKey, expireWeeklyRules, "bench");

  const started = performance.now();
  const ticks = await startDueTimerTicks(db.db, {
    now: Date.now(),
    defaultIntervalSeconds: 3_600,
    enqueue: async (taskId) => {
      const job: TaskJob = { kind: "task", taskId };
      await queue.add(taskJobName("timer"), job, { ...taskJobOptions, jobId: taskJobId(taskId) });
    },
  });
  // A worker that scans for itself may have recorded the tick first; it is the same tick.
  const tick = ticks.find((entry) => entry.studyKey === studyKey)?.task ?? (await lastTimerTick(db.db, studyKey));
  if (!tick || tick.status === "skipped") throw new Error(`no tick runs for ${studyKey}: ${tick?.error ?? "none"}`);
  await pollUntilCompleted(db, tick.id);
  const seconds = (performance.now() - started) / 1000;
  const result = await readResult(tick.id);

  // The floor: the same removal in one UPDATE, on the same 1% expired again, on a vacuumed table as the tick had.
  await expireOnePercent(db, studyKey);
  await db.sql`vacuum analyze participants`;
  const floorStarted = performance.now();
  await expireUpdate(db.sql, studyKey, Math.floor(Date.now() / 1000));
  const floorSeconds = (performance.now() - floorStarted) / 1000;

  // The two-connection floor: the same, split at the middle participant, both halves at once.
  await expireOnePercent(db, studyKey);
  await db.sql`vacuum analyze participants`;
  const [middle] = await db.sql<{ participant_id: string }[]>`
    select participant_id from participants
    where study_key = ${studyKey} and study_status not in ('accountDeleted', 'temporary')
    order by participant_id offset ${Math.floor(count / 2)} limit 1`;
  const split = middle?.participant_id ?? "";
  // a client of one connection each, connected before the clock starts
  const halves = [createDb(databaseUrl, { max: 1 }), createDb(databaseUrl, { max: 1 })];
  let twoSeconds: number;
  try {
    await Promise.all(halves.map((half) => half.sql`select 1`));
    const nowSeconds = Math.floor(Date.now() / 1000);
    const twoStarted = performance.now();
    await Promise.all(
      halves.map(({ sql }, half) =>
        expireUpdate(
          sql,
          studyKey,
          nowSeconds,
          half === 0 ? sql`and participant_id < ${split}` : sql`and participant_id >= ${split}`,
        ),
      ),
    );
    twoSeconds = (performance.now() - twoStarted) / 1000;
  } finally {
    await Promise.all(halves.map((half) => half.close()));
  }

  return {
    participants: count,
    rate: count / seconds,
    seconds,
    changedPerRule: result.participantStateChangedPerRule,
    expired,
    floorRate: count / floorSeconds,
    twoConnectionFloorRate: count / twoSeconds,
  };
}
