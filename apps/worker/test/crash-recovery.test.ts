import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { participants } from "@studyflow/db";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { testRedisUrl } from "@studyflow/testkit";
import {
  call,
  createWorkerHarness,
  exp,
  num,
  onCustom,
  readResult,
  str,
  studyWithRules,
  type WorkerHarness,
} from "./worker-harness";

const NOW_S = Math.floor(Date.now() / 1000);
const appendSurvey = [onCustom(call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")))];
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));

/** A worker process; `env` adds to its environment (BULK_WRITES_IN_DATABASE=off: every batch in the engine). */
function startChild(h: WorkerHarness, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn("npx", ["tsx", "apps/worker/test/child-worker.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: h.database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: h.prefix,
      RESULT_DIR: h.resultDir,
      BATCH_SIZE: "25",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
    // Its own process group, so the kill reaches the node process behind npx.
    detached: true,
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`child worker exited early (${code})`)));
  });
}

async function copiesPerParticipant(h: WorkerHarness) {
  const [row] = await h.database.db
    .select({
      min: sql<number>`min(jsonb_array_length(${participants.assignedSurveys}))::int`,
      max: sql<number>`max(jsonb_array_length(${participants.assignedSurveys}))::int`,
    })
    .from(participants);
  return row;
}

describe("crash recovery", () => {
  let h: WorkerHarness;
  beforeEach(async () => {
    h = await createWorkerHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  // appending a survey is no idempotent write: a batch applied twice would show as two copies
  it("SIGKILL of a worker mid-task: a new worker finishes it, every participant applied exactly once", async () => {
    await studyWithRules(h, "crash");
    await addSyntheticParticipants(h.database.db, { studyKey: "crash", count: 3_000, enteredAt: NOW_S });
    const child = await startChild(h);
    const taskId = await h.createTask("crash", appendSurvey);
    for (;;) {
      const row = await h.task(taskId);
      if (row.processedCount >= 300) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    process.kill(-child.pid!, "SIGKILL");
    const atKill = await h.task(taskId);
    expect(atKill.status).toBe("in_progress");
    expect(atKill.processedCount).toBeLessThan(3_000);

    h.start({ batchSize: 100, lockDurationMs: 2_000, stalledIntervalMs: 1_000 });
    const done = await h.waitForTask(taskId, ["completed", "failed"], 90_000);
    expect(done.status).toBe("completed");
    expect(done.processedCount).toBe(3_000);
    expect(await copiesPerParticipant(h)).toEqual({ min: 1, max: 1 });
    expect((await readResult(h, done.resultFile)).participantStateChangedPerRule).toEqual([3_000]);
  });

  it("SIGKILL mid-task of a run in the engine that reads only a tenth: every participant counted, the tenth applied once", async () => {
    await studyWithRules(h, "tenth");
    await addSyntheticParticipants(h.database.db, { studyKey: "tenth", count: 20_000, enteredAt: NOW_S });
    await h.database.db.execute(sql`
      update participants set flags = '{"group":"g0"}'::jsonb where substring(participant_id from 2)::int % 10 = 0`);
    // the batches run in the engine, as for rules the database cannot run
    const child = await startChild(h, { BULK_WRITES_IN_DATABASE: "off" });
    const rules = [
      call(
        "IFTHEN",
        exp(call("hasParticipantFlag", str("group"), str("g0"))),
        exp(call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal"))),
      ),
    ];
    const taskId = await h.createTask("tenth", rules);
    // killed as soon as a batch has committed: batches of 25 selected rows pass over about 250
    for (;;) {
      const row = await h.task(taskId);
      if (row.processedCount > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    process.kill(-child.pid!, "SIGKILL");
    const atKill = await h.task(taskId);
    expect(atKill.status).toBe("in_progress");
    expect(atKill.processedCount).toBeLessThan(20_000);

    h.start({ batchSize: 25, lockDurationMs: 2_000, stalledIntervalMs: 1_000, bulkWritesInDatabase: false });
    const done = await h.waitForTask(taskId, ["completed", "failed"], 90_000);
    expect(done).toMatchObject({ status: "completed", processedCount: 20_000, targetCount: 20_000 });
    const [copies] = await h.database.db.execute<{ flagged: number; others: number }>(sql`
      select count(*) filter (where flags ? 'group' and jsonb_array_length(assigned_surveys) = 1)::int as flagged,
             count(*) filter (where not flags ? 'group' and jsonb_array_length(assigned_surveys) = 0)::int as others
      from participants`);
    expect(copies).toEqual({ flagged: 2_000, others: 18_000 });
  });

  it("a dropped Redis connection mid-task still completes", async () => {
    await studyWithRules(h, "flaky");
    await addSyntheticParticipants(h.database.db, { studyKey: "flaky", count: 2_000, enteredAt: NOW_S });
    const name = `sf-worker-${h.prefix}`;
    h.start({ batchSize: 25, concurrency: 1, redisName: name });
    const taskId = await h.createTask("flaky", appendSurvey);
    for (;;) {
      const row = await h.task(taskId);
      if (row.processedCount >= 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Cut every connection of this worker from the server side; ioredis reconnects.
    const admin = new Redis(testRedisUrl);
    try {
      const clients = (await admin.client("LIST")) as string;
      const ids = clients
        .split("\n")
        .filter((line) => line.includes(`name=${name}`))
        .map((line) => /id=(\d+)/.exec(line)?.[1])
        .filter((id): id is string => id !== undefined);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) await admin.client("KILL", "ID", id);
    } finally {
      admin.disconnect();
    }
    const done = await h.waitForTask(taskId, ["completed", "failed"], 90_000);
    expect(done.status).toBe("completed");
    expect(await copiesPerParticipant(h)).toEqual({ min: 1, max: 1 });
  });
});
