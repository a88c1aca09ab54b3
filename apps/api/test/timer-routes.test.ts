import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyTimers, tasks } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { startDueTimerTicks } from "@studyflow/domain/timer";
import { taskJobOptions, taskJobId, taskJobName } from "@studyflow/queue";
import { bearer, call, managementToken, onEvent, postJson, researcher, setupStudy, str } from "./fixtures";
import { loadConfig } from "../src/config";
import { createTestApp, type TestApp } from "./test-app";

const NOW_S = Math.floor(Date.now() / 1000);
const HOUR = 3_600_000;
/**
 * The app's clock in these tests: 20 minutes into the current hour, so tokens minted now stay
 * valid (the app checks them against its clock) and the hourly slot is known.
 */
const HOUR_START = Math.floor(Date.now() / HOUR) * HOUR;
const NOW = HOUR_START + 20 * 60_000;
const timerRules = [onEvent("TIMER", call("UPDATE_FLAG", str("ticked"), str("yes")))];
const timerUrl = (study: string) => `/v1/studies/${study}/timer`;

describe("study timer routes", () => {
  let t: TestApp;
  let manager: { subject: string; token: string };
  let admin: string;

  const get = (url: string, token?: string) => t.app.request(url, { headers: token ? bearer(token) : {} });
  const put = (study: string, body: unknown, token?: string) => postJson(t, timerUrl(study), body, token, "PUT");
  const auditOf = async (study: string) =>
    (await t.database.db.select().from(auditLog).where(eq(auditLog.studyKey, study)).orderBy(auditLog.id)).filter(
      (entry) => entry.action.startsWith("timer."),
    );

  /** One scan of the timer at `now`, then the ticks it queued run here to completion (no worker). */
  async function tickAt(now: number) {
    const started = await startDueTimerTicks(t.database.db, {
      now,
      defaultIntervalSeconds: 3_600,
      enqueue: async (taskId) => {
        await t.deps.taskQueue.add(
          taskJobName("timer"),
          { kind: "task", taskId },
          { ...taskJobOptions, jobId: taskJobId(taskId) },
        );
      },
    });
    for (const tick of started.filter((entry) => entry.status === "queued")) {
      const planned = await planTask(t.database.db, tick.task.id, { clock: systemClock });
      if (planned.status !== "planned") throw new Error(`tick not planned: ${planned.status}`);
      for (const chunk of planned.chunks) {
        await processChunk(t.database.db, tick.task.id, chunk.chunkIndex, { clock: () => now });
      }
      await finalizeIfComplete(t.database.db, tick.task.id, t.config.RESULT_DIR, () => now);
    }
    return started;
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: { RESULT_DIR: path.join(tmpdir(), `sf-timer-${Math.random().toString(36).slice(2)}`) },
    });
    await setupStudy(t, { key: "flu", rules: timerRules });
    await setupStudy(t, { key: "other", rules: timerRules });
    await setupStudy(t, { key: "quiet", rules: [onEvent("ENTER", call("UPDATE_FLAG", str("e"), str("1")))] });
    await addSyntheticParticipants(t.database.db, { studyKey: "flu", count: 30, enteredAt: NOW_S });
    manager = await researcher(t, "flu", "manage-timer");
    admin = await managementToken(t, "root", true);
    t.setNow(NOW);
  });
  afterAll(async () => {
    await t.close();
  });

  it("shows a study's timer: the default schedule, due now when it has not ticked", async () => {
    const res = await get(timerUrl("flu"), manager.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      timer: {
        studyKey: "flu",
        intervalSeconds: null,
        offsetSeconds: 0,
        paused: false,
        effectiveIntervalSeconds: 3_600,
        defaultIntervalSeconds: 3_600,
        handlesTimer: true,
        studyActive: true,
        lastTick: null,
        nextTickAt: new Date(HOUR_START).toISOString(),
        dueNow: true,
        updatedBy: null,
        updatedAt: null,
      },
    });
    const quiet = await (await get(timerUrl("quiet"), admin)).json();
    expect(quiet.timer).toMatchObject({ handlesTimer: false, nextTickAt: null, dueNow: false });
  });

  it("sets the schedule, pauses and resumes, auditing each real change", async () => {
    // The daily slot starting at 02:00 UTC that holds NOW.
    const twoOClock = new Date(NOW).setUTCHours(2, 0, 0, 0);
    const dailySlot = twoOClock <= NOW ? twoOClock : twoOClock - 24 * HOUR;
    const set = await put("other", { intervalSeconds: 86_400, offsetSeconds: 7_200 }, admin);
    expect(set.status).toBe(200);
    expect((await set.json()).timer).toMatchObject({
      intervalSeconds: 86_400,
      offsetSeconds: 7_200,
      effectiveIntervalSeconds: 86_400,
      paused: false,
      // the day's slot began at 02:00 and has not ticked
      nextTickAt: new Date(dailySlot).toISOString(),
      dueNow: true,
      updatedBy: "root",
      updatedAt: new Date(NOW).toISOString(),
    });
    const paused = await (await put("other", { paused: true }, admin)).json();
    expect(paused.timer).toMatchObject({ paused: true, nextTickAt: null, intervalSeconds: 86_400 });
    // the same value again changes nothing and records nothing
    expect((await put("other", { paused: true, offsetSeconds: 7_200 }, admin)).status).toBe(200);
    const resumed = await (await put("other", { paused: false, intervalSeconds: null }, admin)).json();
    expect(resumed.timer).toMatchObject({ paused: false, intervalSeconds: null, effectiveIntervalSeconds: 3_600 });

    const audit = await auditOf("other");
    expect(audit.map((entry) => [entry.actor, entry.action, entry.details])).toEqual([
      [
        "root",
        "timer.schedule.update",
        { intervalSeconds: { from: null, to: 86_400 }, offsetSeconds: { from: 0, to: 7_200 } },
      ],
      ["root", "timer.pause", {}],
      ["root", "timer.schedule.update", { intervalSeconds: { from: 86_400, to: null } }],
      ["root", "timer.resume", {}],
    ]);
  });

  it("answers every bad change with a 400 naming the problem, and changes nothing", async () => {
    await put("flu", { intervalSeconds: 3_600 }, manager.token);
    const before = {
      timers: await t.database.db.select().from(studyTimers),
      audit: await auditOf("flu"),
    };
    const cases: [unknown, RegExp][] = [
      [{}, /give at least one of intervalSeconds, offsetSeconds, paused/],
      [{ intervalSeconds: 59 }, /intervalSeconds must be a whole number from 60 to 604800/],
      [{ intervalSeconds: 604_801 }, /intervalSeconds must be a whole number from 60/],
      [{ intervalSeconds: 90.5 }, /intervalSeconds must be a whole number/],
      [{ intervalSeconds: "3600" }, /intervalSeconds must be a whole number/],
      [{ offsetSeconds: -1 }, /offsetSeconds must be a whole number from 0 to 604799/],
      [{ offsetSeconds: 1e300 }, /offsetSeconds must be a whole number/],
      [{ offsetSeconds: 3_600 }, /offsetSeconds \(3600\) must be less than the interval \(3600 seconds\)/],
      [{ intervalSeconds: 600, offsetSeconds: 900 }, /must be less than the interval \(600 seconds\)/],
      [{ paused: "yes" }, /paused must be true or false/],
      [{ paused: null }, /paused must be true or false/],
      [{ paused: true, nextTick: "soon" }, /nextTick/],
      [[], /body/],
      ["not json", /JSON|body/],
    ];
    for (const [body, message] of cases) {
      const res = await put("flu", body, manager.token);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const answer = await res.json();
      expect(Object.keys(answer), JSON.stringify(body)).toEqual(["error"]);
      expect(answer.error, JSON.stringify(body)).toMatch(message);
    }
    expect(await t.database.db.select().from(studyTimers)).toEqual(before.timers);
    expect(await auditOf("flu")).toEqual(before.audit);
    await put("flu", { intervalSeconds: null }, manager.token);
  });

  it("401 without a token, 403 without manage-timer on the study, 404 for an unknown study", async () => {
    const urls = [timerUrl("flu"), `${timerUrl("flu")}/ticks`];
    for (const url of urls) {
      const res = await get(url);
      expect(res.status, url).toBe(401);
      expect(await res.json()).toEqual({ error: "missing Authorization header" });
    }
    expect((await put("flu", { paused: true })).status).toBe(401);

    const runner = await researcher(t, "flu", "run-study-action");
    const elsewhere = await researcher(t, "other", "manage-timer");
    for (const token of [runner.token, elsewhere.token]) {
      for (const url of urls) {
        const res = await get(url, token);
        expect(res.status, url).toBe(403);
        expect(await res.json()).toEqual({ error: 'missing permission "manage-timer" for study "flu"' });
      }
      expect((await put("flu", { paused: true }, token)).status).toBe(403);
    }
    expect((await t.database.db.select().from(studyTimers).where(eq(studyTimers.studyKey, "flu")))[0]?.paused).toBe(
      false,
    );

    for (const url of [timerUrl("nope"), `${timerUrl("nope")}/ticks`]) {
      const res = await get(url, admin);
      expect(res.status, url).toBe(404);
      expect(await res.json()).toEqual({ error: 'study "nope" not found' });
    }
    expect((await put("nope", { paused: true }, admin)).status).toBe(404);
  });

  it("ticks are tasks: listed with the timer, shown and their results served by the task routes", async () => {
    // Ten-minute slots: NOW (twenty past the hour) is the start of one.
    expect((await put("flu", { intervalSeconds: 600 }, manager.token)).status).toBe(200);
    const first = NOW + 60_000;
    const [tick] = await tickAt(first);
    expect(tick).toMatchObject({ studyKey: "flu", status: "queued", dueAt: new Date(NOW) });

    // A run-actions task of the study keeps the next slot's tick from running: it is recorded as skipped.
    const owner = await researcher(t, "flu", "run-study-action");
    const run = await postJson(
      t,
      "/v1/studies/flu/run-actions/participants/",
      { rules: [], dryRun: true },
      owner.token,
    );
    expect(run.status).toBe(200);
    const runTask = (await run.json()).task;
    const skipped = (await tickAt(first + 10 * 60_000)).find((entry) => entry.studyKey === "flu");
    expect(skipped).toMatchObject({ status: "skipped" });
    await postJson(t, `/v1/studies/flu/run-actions/participants/task/${runTask.id}/cancel`, {}, owner.token);

    t.setNow(NOW + 12 * 60_000);
    const state = (await (await get(timerUrl("flu"), manager.token)).json()).timer;
    expect(state.lastTick).toMatchObject({
      dueAt: new Date(NOW + 10 * 60_000).toISOString(),
      rulesVersion: 1,
      task: { id: skipped!.task.id, kind: "timer", status: "skipped", createdBy: "study-timer" },
    });
    expect(state.lastTick.task.error).toBe(`skipped: run-actions task ${runTask.id} of the study was queued`);
    expect(state).toMatchObject({ nextTickAt: new Date(NOW + 20 * 60_000).toISOString(), dueNow: false });
    t.setNow(NOW);

    const page1 = (await (await get(`${timerUrl("flu")}/ticks?limit=1`, manager.token)).json()) as {
      ticks: { task: { id: string } }[];
      nextCursor: string;
    };
    expect(page1.ticks.map((entry) => entry.task.id)).toEqual([skipped!.task.id]);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = await (
      await get(`${timerUrl("flu")}/ticks?limit=1&cursor=${encodeURIComponent(page1.nextCursor)}`, manager.token)
    ).json();
    expect(page2).toEqual({
      ticks: [
        expect.objectContaining({
          dueAt: new Date(NOW).toISOString(),
          task: expect.objectContaining({ id: tick!.task.id, status: "completed", processedCount: 30 }),
        }),
      ],
      nextCursor: null,
    });
    for (const query of [
      "limit=0",
      "limit=x",
      "cursor=nonsense",
      `cursor=${Buffer.from('["x"]').toString("base64url")}`,
    ]) {
      const res = await get(`${timerUrl("flu")}/ticks?${query}`, manager.token);
      expect(res.status, query).toBe(400);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    }

    // Anyone with run-study-action on the study sees a tick (it has no person as creator).
    const taskUrl = `/v1/studies/flu/run-actions/participants/task/${tick!.task.id}`;
    const shown = await get(taskUrl, owner.token);
    expect(shown.status).toBe(200);
    expect((await shown.json()).task).toMatchObject({ id: tick!.task.id, kind: "timer", status: "completed" });
    const result = await get(`${taskUrl}/result`, owner.token);
    expect(result.status).toBe(200);
    expect(await result.json()).toMatchObject({
      participantCount: 30,
      participantStateChangedPerRule: [30],
      errorCount: 0,
      dryRun: false,
      tick: { dueAt: new Date(NOW).toISOString(), rulesVersion: 1 },
    });
    expect((await get(taskUrl, manager.token)).status).toBe(403);
    expect((await get(`/v1/studies/other/run-actions/participants/task/${tick!.task.id}`, admin)).status).toBe(404);
    const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, tick!.task.id));
    expect(row?.createdBy).toBe("study-timer");
  });
});

describe("the study timer's default interval is TIMER_INTERVAL_SECONDS, read as the workers read it", () => {
  let t: TestApp;
  let admin: string;
  const QUARTER = 900_000;

  beforeAll(async () => {
    t = await createTestApp({ env: { TIMER_INTERVAL_SECONDS: "900" } });
    await setupStudy(t, { key: "quarterly", rules: timerRules });
    await setupStudy(t, { key: "own", rules: timerRules });
    admin = await managementToken(t, "root", true);
    t.setNow(NOW);
  });
  afterAll(async () => {
    await t.close();
  });

  it("a study without an interval of its own shows 900 as its interval and as the default; its own one wins", async () => {
    const shown = await (await t.app.request(timerUrl("quarterly"), { headers: bearer(admin) })).json();
    expect(shown.timer).toMatchObject({
      intervalSeconds: null,
      effectiveIntervalSeconds: 900,
      defaultIntervalSeconds: 900,
      nextTickAt: new Date(Math.floor(NOW / QUARTER) * QUARTER).toISOString(),
      dueNow: true,
    });

    const own = await postJson(t, timerUrl("own"), { intervalSeconds: 7_200 }, admin, "PUT");
    expect((await own.json()).timer).toMatchObject({
      intervalSeconds: 7_200,
      effectiveIntervalSeconds: 7_200,
      defaultIntervalSeconds: 900,
    });

    // The workers' scan with the same setting ticks the same slot the API shows as due.
    const started = await startDueTimerTicks(t.database.db, {
      now: NOW,
      defaultIntervalSeconds: t.config.TIMER_INTERVAL_SECONDS,
      enqueue: () => Promise.resolve(),
    });
    const quarterly = started.find((tick) => tick.studyKey === "quarterly");
    expect(quarterly?.dueAt.toISOString()).toBe(shown.timer.nextTickAt);
    expect(quarterly?.task.input).toMatchObject({ intervalSeconds: 900, defaultInterval: true });
    const after = await (await t.app.request(timerUrl("quarterly"), { headers: bearer(admin) })).json();
    expect(after.timer).toMatchObject({
      dueNow: false,
      nextTickAt: new Date(Math.floor(NOW / QUARTER) * QUARTER + QUARTER).toISOString(),
    });
  });

  it("refuses to start with a default outside the bounds a study's own interval has", () => {
    for (const value of ["59", "604801", "1.5", "hourly"]) {
      expect(() => loadConfig({ NODE_ENV: "test", TIMER_INTERVAL_SECONDS: value }), value).toThrow(
        /TIMER_INTERVAL_SECONDS/,
      );
    }
  });
});
