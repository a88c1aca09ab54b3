/**
 * The study timer across real worker processes (fault-worker.ts with the timer on): however many
 * workers scan, a due tick runs once; a worker SIGKILLed in the middle of a tick leaves it to
 * another, which resumes it so that every participant gets the tick exactly once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addSyntheticParticipants, createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import {
  call,
  createTestDatabase,
  createTestRedis,
  deletePrefix,
  num,
  onEvent,
  str,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import {
  appliedPerParticipant,
  filesBelow,
  sleep,
  startChild,
  timerDueNow,
  timerScans,
  timerTicksOf,
  waitForTick,
  type ChildApp,
} from "./fault-harness";

const NOW_S = Math.floor(Date.now() / 1000);
/** Not idempotent: a participant given the tick twice has two surveys and two reports. */
const timerRules = [
  onEvent(
    "TIMER",
    call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
    call("INIT_REPORT", str("timer-report")),
  ),
];

describe("the study timer across worker processes", () => {
  let database: TestDatabase;
  let resultDir: string;
  const prefixes: string[] = [];
  const workers: ChildApp[] = [];

  /** A fault-worker scanning for due ticks every 200 ms, with small batches so a tick takes a while. */
  function startTimerWorker(prefix: string) {
    const worker = startChild("e2e/test/fault-worker.ts", {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
      BATCH_SIZE: "25",
      CHUNK_SIZE: "1000",
      CONCURRENCY: "2",
      TIMER_SCAN_INTERVAL_MS: "200",
    });
    workers.push(worker);
    return worker;
  }

  /** A study with `count` participants whose tick is due now; the rules come last, so no tick starts early. */
  async function dueStudy(key: string, count: number) {
    await createStudy(database.db, { key });
    await addSyntheticParticipants(database.db, { studyKey: key, count, enteredAt: NOW_S });
    await timerDueNow(database.db, key);
    await setStudyRules(database.db, key, timerRules, "fault-test");
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-timer-faults-"));
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    const redis = createTestRedis();
    for (const prefix of prefixes) await deletePrefix(redis, prefix);
    redis.disconnect();
    await database?.drop();
    await rm(resultDir, { recursive: true, force: true });
  });

  it("two workers scanning, one due tick: it runs once, every participant gets it once", async () => {
    const prefix = uniqueQueuePrefix();
    prefixes.push(prefix);
    const pair = [startTimerWorker(prefix), startTimerWorker(prefix)];
    await Promise.all(pair.map((worker) => worker.waitForLine(/^ready$/)));
    await dueStudy("duo", 2_000);

    const done = await waitForTick(database.db, "duo", (tick) => tick.status === "completed", 30_000);
    expect(done).toMatchObject({ processedCount: 2_000, createdBy: "study-timer", error: "" });
    // Scans go on every 200 ms in both workers; none of them records the slot again.
    await sleep(1_000);
    expect(await timerTicksOf(database.db, "duo")).toHaveLength(1);
    const scans = await timerScans(prefix);
    expect(scans.length).toBeGreaterThan(3);
    expect(scans.flatMap((scan) => scan.ticks)).toEqual([
      { studyKey: "duo", status: "queued", dueAt: expect.any(String), taskId: done.id },
    ]);
    const applied = await appliedPerParticipant(database.db, "duo", "timer-report");
    expect(applied.surveys).toEqual({ participants: 2_000, min: 1, max: 1 });
    expect(applied.reports).toEqual({ participants: 2_000, min: 1, max: 1 });
    await Promise.all(pair.map((worker) => worker.stop()));
  });

  it(
    "a worker SIGKILLed mid-tick: another resumes the tick, every participant gets it exactly once",
    { timeout: 120_000 },
    async () => {
      const prefix = uniqueQueuePrefix();
      prefixes.push(prefix);
      const first = startTimerWorker(prefix);
      await first.waitForLine(/^ready$/);
      await dueStudy("crash", 3_000);

      const running = await waitForTick(database.db, "crash", (tick) => tick.processedCount >= 300, 30_000);
      first.child.kill("SIGKILL");
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
      const [atKill] = await timerTicksOf(database.db, "crash");
      expect(atKill).toMatchObject({ id: running.id, status: "in_progress" });
      expect(atKill!.processedCount).toBeLessThan(3_000);

      // The successor also scans: it finds the slot ticked and resumes the tick's stalled jobs.
      const second = startTimerWorker(prefix);
      await second.waitForLine(/^ready$/);
      const done = await waitForTick(database.db, "crash", (tick) => tick.status === "completed", 45_000);
      expect(done).toMatchObject({ id: running.id, processedCount: 3_000, error: "" });
      expect(await timerTicksOf(database.db, "crash")).toHaveLength(1);
      const applied = await appliedPerParticipant(database.db, "crash", "timer-report");
      expect(applied.surveys).toEqual({ participants: 3_000, min: 1, max: 1 });
      expect(applied.reports).toEqual({ participants: 3_000, min: 1, max: 1 });
      expect(await filesBelow(path.join(resultDir, "crash"))).toEqual([`${done.id}.json`]);
    },
  );
});
