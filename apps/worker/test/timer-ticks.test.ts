import { readFile } from "node:fs/promises";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, participants, ruleFailures, taskChunks, tasks } from "@studyflow/db";
import { type RunActionsResult } from "@studyflow/domain/bulk";
import { systemClock } from "@studyflow/domain/foundation";
import { updateStudy } from "@studyflow/domain/study-config";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { planTask } from "@studyflow/domain/task-pipeline";
import { getStudyTimer, startDueTimerTicks, updateStudyTimer, type StartedTick } from "@studyflow/domain/timer";
import { taskJobOptions, taskJobId, taskJobName, type TaskJob } from "@studyflow/queue";
import { onEvent } from "@studyflow/testkit";
import type { WorkerRuntime } from "../src/runtime";
import { call, createWorkerHarness, exp, onCustom, str, studyWithRules, type WorkerHarness } from "./worker-harness";

const NOW_S = Math.floor(Date.now() / 1000);
/** A slot boundary of every interval used here (a whole day in UTC), far from the real clock. */
const BASE = Date.UTC(2031, 0, 1, 0, 0, 0);
const HOUR = 3_600_000;
const onTimer = (...actions: Parameters<typeof onEvent>[1][]) => onEvent("TIMER", ...actions);
const setFlag = (key: string, value: string) => call("UPDATE_FLAG", str(key), str(value));

async function readResult(h: WorkerHarness, resultFile: string): Promise<RunActionsResult> {
  return JSON.parse(await readFile(path.join(h.resultDir, resultFile), "utf8")) as RunActionsResult;
}

describe("study timer ticks on the bulk pipeline", () => {
  let h: WorkerHarness;
  let runtime: WorkerRuntime;
  beforeAll(async () => {
    h = await createWorkerHarness();
    // No timer in this runtime: each test runs the timer's scan itself, at the instant it names.
    runtime = h.start({ batchSize: 500, chunkSize: 1_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  /** One scan of the timer at `now`, queuing ticks as the worker's timer does. */
  /** A scan as the worker's scheduler runs it; `queue: false` records the ticks without queueing their jobs. */
  const scan = (
    now: number,
    defaultIntervalSeconds = 3_600,
    options: { queue?: boolean } = {},
  ): Promise<StartedTick[]> =>
    startDueTimerTicks(h.database.db, {
      now,
      defaultIntervalSeconds,
      enqueue: async (taskId) => {
        if (options.queue === false) return;
        const job: TaskJob = { kind: "task", taskId };
        await h.queue.add(taskJobName("timer"), job, { ...taskJobOptions, jobId: taskJobId(taskId) });
      },
    });
  const ticksOf = (studyKey: string) =>
    h.database.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.studyKey, studyKey), eq(tasks.kind, "timer")))
      .orderBy(tasks.createdAt);
  const tickOf = (started: StartedTick[], studyKey: string) => {
    const tick = started.find((entry) => entry.studyKey === studyKey);
    if (!tick) throw new Error(`no tick for ${studyKey} in ${JSON.stringify(started.map((t) => t.studyKey))}`);
    return tick;
  };

  it("a tick over 5,000 participants: the TIMER event once to each eligible one, exact per-rule counts", async () => {
    await studyWithRules(h, "big", [
      onTimer(setFlag("ticked", "yes")),
      call(
        "IFTHEN",
        exp(call("and", exp(call("checkEventType", str("TIMER"))), exp(call("hasStudyStatus", str("active"))))),
        exp(setFlag("active", "seen")),
      ),
      onEvent("ENTER", setFlag("entered", "yes")),
      onCustom(setFlag("custom", "yes")),
      // already set by rule 0: runs for everyone, changes no one
      onTimer(setFlag("ticked", "yes")),
    ]);
    await addSyntheticParticipants(h.database.db, {
      studyKey: "big",
      count: 5_000,
      statuses: ["active", "exited", "temporary", "accountDeleted", "virtual"],
      enteredAt: NOW_S,
    });
    const started = await scan(BASE + 90_000);
    const tick = tickOf(started, "big");
    // 00:01:30 lies in the hourly slot that began at 00:00
    expect(tick).toMatchObject({ status: "queued", dueAt: new Date(BASE) });
    expect(tick.task).toMatchObject({
      kind: "timer",
      createdBy: "study-timer",
      targetCount: 3_000,
      input: {
        dueAt: new Date(BASE).toISOString(),
        rulesVersion: 1,
        intervalSeconds: 3_600,
        offsetSeconds: 0,
        defaultInterval: true,
      },
    });

    const done = await h.waitForTask(tick.task.id, ["completed", "failed"]);
    expect(done).toMatchObject({ status: "completed", processedCount: 3_000, error: "" });
    const chunks = await h.database.db.select().from(taskChunks).where(eq(taskChunks.taskId, tick.task.id));
    // 3,000 in chunks of 1,000, the last open-ended for participants who arrive meanwhile (no empty tail)
    expect(chunks.length).toBe(3);
    expect(chunks.find((chunk) => chunk.chunkIndex === 2)?.toKey).toBeNull();
    const result = await readResult(h, done.resultFile);
    expect(result).toMatchObject({
      participantCount: 3_000,
      participantStateChangedPerRule: [3_000, 1_000, 0, 0, 0],
      errorCount: 0,
      errors: [],
      dryRun: false,
      tick: { dueAt: new Date(BASE).toISOString(), rulesVersion: 1 },
    });

    const byStatus = await h.database.db
      .select({
        status: participants.studyStatus,
        ticked: sql<number>`count(*) filter (where ${participants.flags} ->> 'ticked' = 'yes')::int`,
        active: sql<number>`count(*) filter (where ${participants.flags} ->> 'active' = 'seen')::int`,
        others: sql<number>`count(*) filter (where ${participants.flags} ?| array['entered', 'custom'])::int`,
        versions: sql<number>`sum(${participants.version})::int`,
      })
      .from(participants)
      .where(eq(participants.studyKey, "big"))
      .groupBy(participants.studyStatus);
    const summary = Object.fromEntries(byStatus.map((row) => [row.status, row]));
    // written once each (version 1 → 2): one tick, one write per participant
    expect(summary.active).toMatchObject({ ticked: 1_000, active: 1_000, others: 0, versions: 2_000 });
    expect(summary.exited).toMatchObject({ ticked: 1_000, active: 0, others: 0, versions: 2_000 });
    expect(summary.virtual).toMatchObject({ ticked: 1_000, active: 0, others: 0, versions: 2_000 });
    expect(summary.temporary).toMatchObject({ ticked: 0, versions: 1_000 });
    expect(summary.accountDeleted).toMatchObject({ ticked: 0, versions: 1_000 });

    // The same slot again finds its tick; the next slot gets the next one.
    expect(await scan(BASE + HOUR - 1_000)).toEqual([]);
    const next = tickOf(await scan(BASE + HOUR + 5_000), "big");
    expect(next.dueAt.getTime()).toBe(BASE + HOUR);
    expect((await h.waitForTask(next.task.id, ["completed", "failed"])).status).toBe("completed");
    expect(await ticksOf("big")).toHaveLength(2);
  });

  it("a failing rule is skipped, the later rules still run, and its failures are recorded", async () => {
    await studyWithRules(h, "faulty", [
      onTimer(setFlag("before", "yes")),
      // IF fails with its branch: "" is no number, for every participant
      call(
        "IF",
        exp(call("checkEventType", str("TIMER"))),
        exp(
          call(
            "UPDATE_FLAG",
            str("parsed"),
            exp(call("parseValueAsNum", exp(call("getParticipantFlagValue", str("score"))))),
          ),
        ),
      ),
      onTimer(setFlag("after", "yes")),
    ]);
    await addSyntheticParticipants(h.database.db, { studyKey: "faulty", count: 1_200, enteredAt: NOW_S });
    const tick = tickOf(await scan(BASE + 10_000), "faulty");
    const done = await h.waitForTask(tick.task.id, ["completed", "failed"]);
    expect(done.status).toBe("completed");
    const result = await readResult(h, done.resultFile);
    expect(result).toMatchObject({ participantCount: 1_200, participantStateChangedPerRule: [1_200, 0, 1_200] });
    expect(result.errorCount).toBe(1_200);
    expect(result.errors).toHaveLength(1_000);
    expect(result.errors[0]?.error).toMatch(
      /^rules\[1\]\.data\[1\]\.exp\.data\[1\]\.exp: rule 1: UPDATE_FLAG: .*ParseFloat/,
    );

    const rows = await h.database.db
      .select({ flags: participants.flags, version: participants.version })
      .from(participants)
      .where(eq(participants.studyKey, "faulty"));
    expect(rows).toHaveLength(1_200);
    for (const row of rows) expect(row).toEqual({ flags: { before: "yes", after: "yes" }, version: 2 });

    // A sample per batch (5 of each batch of 500) with the tick's task, version and outcome.
    const recorded = await h.database.db.select().from(ruleFailures).where(eq(ruleFailures.taskId, tick.task.id));
    expect(recorded).toHaveLength(15);
    expect(recorded[0]).toMatchObject({
      studyKey: "faulty",
      eventType: "TIMER",
      eventKey: "",
      rulesVersion: 1,
      ruleIndex: 1,
      path: "rules[1].data[1].exp.data[1].exp",
      outcome: "rule-skipped",
    });
  });

  it("one tick per slot, however many scans run at once; interval and offset set the slots", async () => {
    await studyWithRules(h, "slots", [onTimer(setFlag("t", "1"))]);
    await addSyntheticParticipants(h.database.db, { studyKey: "slots", count: 10, enteredAt: NOW_S });
    await updateStudyTimer(h.database.db, "slots", { intervalSeconds: 900, offsetSeconds: 120 }, "tester", {
      now: BASE,
      defaultIntervalSeconds: 3_600,
    });
    // Eight scans at the same instant, as two workers and a repeated job might run them.
    const at = BASE + 5 * 60_000; // 00:05: the slot that began 00:02
    const scans = await Promise.all(Array.from({ length: 8 }, () => scan(at)));
    const recorded = scans.flat().filter((tick) => tick.studyKey === "slots");
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.dueAt.toISOString()).toBe("2031-01-01T00:02:00.000Z");
    expect(recorded[0]?.task.input).toMatchObject({ intervalSeconds: 900, offsetSeconds: 120, defaultInterval: false });
    await h.waitForTask(recorded[0]!.task.id, ["completed"]);

    const state = await getStudyTimer(h.database.db, "slots", { now: at, defaultIntervalSeconds: 3_600 });
    expect(state).toMatchObject({
      intervalSeconds: 900,
      offsetSeconds: 120,
      effectiveIntervalSeconds: 900,
      paused: false,
      handlesTimer: true,
      nextTickAt: new Date("2031-01-01T00:17:00.000Z"),
      dueNow: false,
      updatedBy: "tester",
    });
    expect(state.lastTick?.id).toBe(recorded[0]?.task.id);

    expect((await scan(BASE + 16 * 60_000)).filter((tick) => tick.studyKey === "slots")).toEqual([]);
    const second = tickOf(await scan(BASE + 17 * 60_000), "slots");
    expect(second.dueAt.toISOString()).toBe("2031-01-01T00:17:00.000Z");
    await h.waitForTask(second.task.id, ["completed"]);
    expect(await ticksOf("slots")).toHaveLength(2);
  });

  it("only active studies whose rules handle TIMER get ticks", async () => {
    await studyWithRules(h, "no-rules");
    await studyWithRules(h, "enter-only", [onEvent("ENTER", setFlag("e", "1")), onCustom(setFlag("c", "1"))]);
    // not guarded by the event type: runs on TIMER as on every event
    await studyWithRules(h, "unguarded", [
      call("IFTHEN", exp(call("hasStudyStatus", str("active"))), exp(setFlag("s", "1"))),
    ]);
    await studyWithRules(h, "inactive", [onTimer(setFlag("t", "1"))]);
    await updateStudy(h.database.db, "inactive", { status: "inactive" }, "tester", { clock: systemClock });
    const keys = (await scan(BASE + 2 * HOUR + 1_000)).map((tick) => tick.studyKey);
    expect(keys).toContain("unguarded");
    for (const key of ["no-rules", "enter-only", "inactive"]) expect(keys).not.toContain(key);
    const enterOnly = await getStudyTimer(h.database.db, "enter-only", { now: BASE, defaultIntervalSeconds: 3_600 });
    expect(enterOnly).toMatchObject({ handlesTimer: false, nextTickAt: null, intervalSeconds: null });
  });

  it("a tick never overlaps a run-actions task: one due while it runs is recorded as skipped, the next runs after", async () => {
    await studyWithRules(h, "busy", [onTimer(setFlag("ticked", "yes"))]);
    await addSyntheticParticipants(h.database.db, { studyKey: "busy", count: 3_000, enteredAt: NOW_S });
    // Only a worker with small batches, so the run is still going when the tick falls due.
    await runtime.worker.pause();
    const slow = h.start({ batchSize: 25, chunkSize: 100_000, concurrency: 1 });
    const runId = await h.createTask("busy", [onCustom(setFlag("bulk", "done"))]);
    await h.waitForTask(runId, ["in_progress"]);

    const skipped = tickOf(await scan(BASE + 3 * HOUR + 1_000), "busy");
    expect(skipped.status).toBe("skipped");
    expect(skipped.task).toMatchObject({
      status: "skipped",
      processedCount: 0,
      error: `skipped: run-actions task ${runId} of the study was running`,
    });
    expect(skipped.task.finishedAt).not.toBeNull();
    expect(await h.queue.getJob(skipped.task.id)).toBeUndefined();
    expect(await h.database.db.select().from(taskChunks).where(eq(taskChunks.taskId, skipped.task.id))).toEqual([]);
    // The slot counts as ticked: no second try while the run goes on.
    expect((await scan(BASE + 3 * HOUR + 30 * 60_000)).map((tick) => tick.studyKey)).not.toContain("busy");

    const run = await h.waitForTask(runId, ["completed", "failed"]);
    expect(run.status).toBe("completed");
    await slow.close(5_000);
    await runtime.worker.resume();
    const next = tickOf(await scan(BASE + 4 * HOUR + 1_000), "busy");
    expect(next.status).toBe("queued");
    const tick = await h.waitForTask(next.task.id, ["completed", "failed"]);
    expect(tick).toMatchObject({ status: "completed", processedCount: 3_000 });
    expect(tick.startedAt!.getTime()).toBeGreaterThanOrEqual(run.finishedAt!.getTime());
    const [counts] = await h.database.db
      .select({
        both: sql<number>`count(*) filter (where ${participants.flags} = '{"bulk":"done","ticked":"yes"}'::jsonb)::int`,
      })
      .from(participants)
      .where(eq(participants.studyKey, "busy"));
    expect(counts?.both).toBe(3_000);
  });

  it("a tick that finds another task ahead when it starts is skipped, never queued behind it", async () => {
    await studyWithRules(h, "race", [onTimer(setFlag("t", "1"))]);
    // Not yet started (its job not queued, so no worker takes it first), and a run-actions task that
    // began meanwhile (created before the tick's check committed).
    const tick = tickOf(await scan(BASE + 5 * HOUR + 1_000, 3_600, { queue: false }), "race");
    const earlier = await h.insertTaskRow("race", {
      status: "in_progress",
      createdAt: new Date(tick.task.createdAt.getTime() - 1_000),
    });
    const outcome = await planTask(h.database.db, tick.task.id, { clock: systemClock });
    expect(outcome).toEqual({
      status: "skipped",
      reason: `skipped: run-actions task ${earlier.id} of the study was running`,
    });
    expect(await h.task(tick.task.id)).toMatchObject({
      status: "skipped",
      error: outcome.status === "skipped" ? outcome.reason : "",
    });
    await h.database.db.update(tasks).set({ status: "completed" }).where(eq(tasks.id, earlier.id));
  });

  it("pause and resume: a paused timer gets no tick; resumed, the current slot's tick comes at once", async () => {
    await studyWithRules(h, "pausable", [onTimer(setFlag("t", "1"))]);
    await addSyntheticParticipants(h.database.db, { studyKey: "pausable", count: 20, enteredAt: NOW_S });
    const view = { now: BASE + 6 * HOUR, defaultIntervalSeconds: 3_600 };
    const paused = await updateStudyTimer(h.database.db, "pausable", { paused: true }, "alice", view);
    expect(paused).toMatchObject({ paused: true, nextTickAt: null, updatedBy: "alice" });
    for (const at of [BASE + 6 * HOUR + 1_000, BASE + 7 * HOUR + 1_000]) {
      expect((await scan(at)).map((tick) => tick.studyKey)).not.toContain("pausable");
    }
    expect(await ticksOf("pausable")).toEqual([]);

    const resumed = await updateStudyTimer(h.database.db, "pausable", { paused: false }, "bob", {
      ...view,
      now: BASE + 7 * HOUR + 2_000,
    });
    expect(resumed).toMatchObject({ paused: false, nextTickAt: new Date(BASE + 7 * HOUR), dueNow: true });
    const tick = tickOf(await scan(BASE + 7 * HOUR + 3_000), "pausable");
    expect(tick.dueAt.getTime()).toBe(BASE + 7 * HOUR);
    expect((await h.waitForTask(tick.task.id, ["completed"])).processedCount).toBe(20);

    // Only real changes are audited, each in the change's transaction.
    await updateStudyTimer(h.database.db, "pausable", { paused: false }, "bob", view);
    const audited = await h.database.db
      .select({ actor: auditLog.actor, action: auditLog.action })
      .from(auditLog)
      .where(eq(auditLog.studyKey, "pausable"))
      .orderBy(auditLog.id);
    expect(audited.filter((entry) => entry.action.startsWith("timer."))).toEqual([
      { actor: "alice", action: "timer.pause" },
      { actor: "bob", action: "timer.resume" },
    ]);
  });
});
