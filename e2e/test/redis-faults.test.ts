/**
 * Redis faults against the real processes: every Redis connection of a process closed from the
 * server side (CLIENT KILL by the name the process gave it, as a Redis restart or failover cuts
 * them). The API's rate limits, its enqueueing and its task event streams, and a worker's task in
 * progress must come through, with nothing lost or done twice, and the processes must stay up.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_MANAGEMENT_JWT_SECRET } from "@studyflow/config";
import { tasks } from "@studyflow/db";
import { TASKS_QUEUE } from "@studyflow/queue";
import { mintManagementToken } from "@studyflow/domain/access";
import { addSyntheticParticipants, createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { type TaskRow } from "@studyflow/domain/tasks";
import {
  call,
  createTestDatabase,
  deletePrefix,
  num,
  onEvent,
  str,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
  startTcpProxy,
  type TcpProxy,
} from "@studyflow/testkit";
import {
  appliedPerParticipant,
  chunksOf,
  filesBelow,
  freePort,
  killRedisClients,
  loggedErrors,
  sleep,
  startChild,
  taskRow,
  waitForOk,
  waitForRedisClients,
  waitForTask,
  type ChildApp,
} from "./fault-harness";

const NOW_S = Math.floor(Date.now() / 1000);
const PARTICIPANTS = 3_000;

/** The API's answer when its rate limiter cannot reach Redis: it fails closed. */
const LIMITER_DOWN = { error: "rate limiting is unavailable; try again shortly" };

describe("Redis connections of the API and a worker killed", () => {
  let database: TestDatabase;
  let admin: Redis;
  let api: ChildApp;
  let worker: ChildApp;
  let base: string;
  let token: string;
  let resultDir: string;
  /** The API reaches Redis through this proxy, so one test can take Redis away from it alone. */
  let redisProxy: TcpProxy;
  const prefix = uniqueQueuePrefix();
  const apiName = `sf-fault-api-${prefix}`;
  const workerName = `sf-fault-worker-${prefix}`;
  /** BullMQ names its Worker's blocking connection itself, `<prefix>:<base64 of the queue name>`. */
  const workerBlockingName = `${prefix}:${Buffer.from(TASKS_QUEUE).toString("base64")}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new Redis(testRedisUrl);
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-redis-faults-"));
    await createStudy(database.db, { key: "open" });
    await createStudy(database.db, { key: "bulk" });
    await addSyntheticParticipants(database.db, { studyKey: "bulk", count: PARTICIPANTS, enteredAt: NOW_S });
    await grantPermission(database.db, "researcher", "bulk", "run-study-action");
    await createStudy(database.db, { key: "later" });
    await addSyntheticParticipants(database.db, { studyKey: "later", count: 100, enteredAt: NOW_S });
    await grantPermission(database.db, "researcher", "later", "run-study-action");
    const redisUrl = new URL(testRedisUrl);
    redisProxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    token = await mintManagementToken({
      now: Date.now(),
      subject: "researcher",
      isAdmin: false,
      secret: DEV_MANAGEMENT_JWT_SECRET,
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    api = startChild("e2e/test/fault-api.ts", {
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
      // one reverse proxy: the test names the client address with X-Forwarded-For
      TRUST_PROXY: "1",
      // warn: the Redis connection errors are logged at warn
      LOG_LEVEL: "warn",
      REDIS_CONNECTION_NAME: apiName,
    });
    worker = startChild("e2e/test/fault-worker.ts", {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
      REDIS_CONNECTION_NAME: workerName,
      BATCH_SIZE: "50",
      CHUNK_SIZE: "500",
      CONCURRENCY: "2",
    });
    await Promise.all([waitForOk(`${base}/readyz`, api), worker.waitForLine(/^ready$/)]);
  });
  afterAll(async () => {
    const ended = await Promise.all([api?.stop(), worker?.stop()]);
    await redisProxy?.close();
    await deletePrefix(admin, prefix);
    admin?.disconnect();
    await database?.drop();
    await rm(resultDir, { recursive: true, force: true });
    expect(ended, `${api?.output()}\n${worker?.output()}`).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });

  /** POST /v1/study-service/temp-participant/register from `address`, bounded by a timeout. */
  async function register(address: string) {
    try {
      const response = await fetch(`${base}/v1/study-service/temp-participant/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Forwarded-For": address },
        body: JSON.stringify({ studyKey: "open" }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as Record<string, unknown>;
      return { status: response.status, body, retryAfter: response.headers.get("retry-after") };
    } catch (error) {
      return { status: 0, body: { failure: String(error) }, retryAfter: null };
    }
  }

  it("rate limits hold across killed connections; while they are killed over and over, none is bypassed", async () => {
    // The registration limit: 30 per address per 10 minutes (register-temporary-participant.ts).
    const before = [];
    for (let i = 0; i < 25; i++) before.push(await register("203.0.113.7"));
    expect(before.map((answer) => answer.status)).toEqual(before.map(() => 200));

    await waitForRedisClients(admin, apiName, 2);
    expect(await killRedisClients(admin, apiName)).toBe(2);
    const after = [];
    for (let i = 0; i < 10; i++) after.push(await register("203.0.113.7"));
    // the five slots left, then refusals with Retry-After: the window survived the cut
    expect(after.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    expect(Number(after.at(-1)!.retryAfter)).toBeGreaterThan(0);
    expect((await register("203.0.113.8")).status).toBe(200);

    // Flapping: the API's connections killed every 10 ms for 1.5 s while 4 clients register
    // from one new address: each answer is 200, 429 or a clean JSON error; never more than 30 admitted.
    let flapping = true;
    let kills = 0;
    const killer = (async () => {
      while (flapping) {
        kills += await killRedisClients(admin, apiName);
        await sleep(10);
      }
    })();
    const answers: Awaited<ReturnType<typeof register>>[] = [];
    const clients = Array.from({ length: 4 }, async () => {
      while (flapping) answers.push(await register("198.51.100.9"));
    });
    await sleep(1_500);
    flapping = false;
    await Promise.all([killer, ...clients]);
    const settled = [];
    for (let i = 0; i < 5; i++) settled.push(await register("198.51.100.9"));

    const byStatus = new Map<number, number>();
    for (const answer of [...answers, ...settled]) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    const errors = [
      ...new Set(answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${JSON.stringify(a.body)}`)),
    ];
    console.log(
      `[redis-faults] rate limit while the API's Redis connections were killed ${kills} times in 1.5 s: ` +
        `${answers.length} registrations, by status ${JSON.stringify(Object.fromEntries(byStatus))}; ` +
        `errors ${JSON.stringify(errors.map((e) => e.replace(/request id [^)]+/, "request id …")).slice(0, 3))}; ` +
        `logged ${JSON.stringify(loggedErrors(api.stderr()).slice(0, 4))}`,
    );
    expect(api.alive(), api.output()).toBe(true);
    expect(kills).toBeGreaterThan(10);
    // ioredis's reconnect errors went to the API's log, not unformatted to stderr. Whether a kill
    // raises an error event at all depends on what was in flight on the connection at that
    // moment, so every line about Redis must be a log record, and none an unhandled event.
    expect(api.stderr()).not.toContain("Unhandled error event");
    const redisLines = api
      .stderr()
      .split("\n")
      .filter((line) => /redis/i.test(line));
    expect(redisLines.filter((line) => !line.trimStart().startsWith("{"))).toEqual([]);
    expect(answers.filter((a) => a.status === 0)).toEqual([]);
    for (const answer of answers.filter((a) => ![200, 429].includes(a.status))) {
      expect(answer, JSON.stringify(answer)).toEqual({ status: 503, body: LIMITER_DOWN, retryAfter: "2" });
    }
    // fails closed: an attempt the limiter could not count is refused, never let through
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(30);
    const admitted = answers.filter((a) => a.status === 200).length + settled.filter((a) => a.status === 200).length;
    expect(admitted).toBeLessThanOrEqual(30);
    // and once the connections stay up, the limit answers again: 200 until 30, then 429
    expect(settled.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it("a task enqueued right after a kill runs; its event stream and the worker ride out repeated kills", async () => {
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const taskPath = "/v1/studies/bulk/run-actions/participants";
    const rules = [
      onEvent(
        "CUSTOM",
        call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
        call("INIT_REPORT", str("bulk-report")),
      ),
    ];

    // (after the flapping above, ioredis may still be waiting out its reconnect backoff)
    await waitForRedisClients(admin, apiName, 2);
    expect(await killRedisClients(admin, apiName)).toBe(2);
    const postedAt = Date.now();
    const post = await fetch(`${base}${taskPath}/`, {
      method: "POST",
      headers,
      body: JSON.stringify({ rules }),
      signal: AbortSignal.timeout(10_000),
    });
    const enqueueMs = Date.now() - postedAt;
    expect(post.status, await post.clone().text()).toBe(200);
    const { task } = (await post.json()) as { task: { id: string } };
    const started = Date.now();

    // The event stream, read as it comes.
    const events: { status: string; processedCount: number }[] = [];
    const stream = fetch(`${base}${taskPath}/task/${task.id}/events`, {
      headers,
      signal: AbortSignal.timeout(60_000),
    }).then(async (response) => {
      expect(response.status).toBe(200);
      const decoder = new TextDecoder();
      let buffered = "";
      for await (const chunk of response.body!) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines.filter((l) => l.startsWith("data: "))) {
          events.push((JSON.parse(line.slice(6)) as { task: { status: string; processedCount: number } }).task);
        }
      }
    });

    // Three waves mid-task: every connection of the worker (its BullMQ worker's, that worker's
    // blocking one, its producer's) and of the API.
    const waves: { processed: number; worker: number; api: number }[] = [];
    let row: TaskRow = await taskRow(database.db, task.id);
    for (let nextWaveAt = 300; waves.length < 3;) {
      row = await taskRow(database.db, task.id);
      if (["completed", "failed", "canceled"].includes(row.status)) break;
      if (row.processedCount >= nextWaveAt) {
        waves.push({
          processed: row.processedCount,
          worker: (await killRedisClients(admin, workerName)) + (await killRedisClients(admin, workerBlockingName)),
          api: await killRedisClients(admin, apiName),
        });
        nextWaveAt = row.processedCount + 700;
      }
      await sleep(20);
    }
    await stream;
    const finishedMs = Date.now() - started;
    const done = await taskRow(database.db, task.id);
    console.log(
      `[redis-faults] enqueue right after the kill answered in ${enqueueMs} ms; task of ${PARTICIPANTS} participants ` +
        `done in ${finishedMs} ms through ${waves.length} waves of killed connections ` +
        `(${waves.map((w) => `at ${w.processed}: worker ${w.worker}, api ${w.api}`).join("; ")}); ` +
        `${events.length} stream events; worker log errors ${JSON.stringify(loggedErrors(worker.stderr()).slice(0, 4))}`,
    );

    expect(api.alive(), api.output()).toBe(true);
    expect(worker.alive(), worker.output()).toBe(true);
    expect(waves.length).toBe(3);
    expect(
      waves.every((wave) => wave.worker >= 3 && wave.api >= 2),
      JSON.stringify(waves),
    ).toBe(true);
    // the stream followed the task to its end, in order
    expect(events.at(-1)).toMatchObject({ status: "completed", processedCount: PARTICIPANTS });
    const counts = events.map((event) => event.processedCount);
    expect([...counts].sort((a, b) => a - b)).toEqual(counts);
    // done exactly once
    expect(done).toMatchObject({ status: "completed", processedCount: PARTICIPANTS, targetCount: PARTICIPANTS });
    const chunks = await chunksOf(database.db, task.id);
    expect(chunks.map((chunk) => chunk.status)).toEqual(chunks.map(() => "done"));
    expect(chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0)).toBe(PARTICIPANTS);
    expect(await appliedPerParticipant(database.db, "bulk", "bulk-report")).toEqual({
      surveys: { participants: PARTICIPANTS, min: 1, max: 1 },
      reports: { participants: PARTICIPANTS, min: 1, max: 1 },
    });
    expect(await filesBelow(resultDir)).toEqual([`bulk/${task.id}.json`]);
    const result = await fetch(`${base}${taskPath}/task/${task.id}/result`, { headers });
    expect(result.status).toBe(200);
    expect(await result.json()).toMatchObject({ participantCount: PARTICIPANTS, errorCount: 0 });
    expect(JSON.parse(await readFile(path.join(resultDir, done.resultFile), "utf8"))).toMatchObject({
      participantStateChangedPerRule: [PARTICIPANTS],
    });
  }, 60_000);

  it("with Redis unreachable, the API refuses cleanly what needs it (rate limits fail closed) and recovers", async () => {
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const enqueue = async () => {
      const sent = Date.now();
      const response = await fetch(`${base}/v1/studies/later/run-actions/participants/`, {
        method: "POST",
        headers,
        body: JSON.stringify({ rules: [onEvent("CUSTOM", call("UPDATE_FLAG", str("seen"), str("yes")))] }),
        signal: AbortSignal.timeout(15_000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any>, ms: Date.now() - sent };
    };

    await redisProxy.down();
    const downAt = Date.now();
    const limited = await register("192.0.2.10");
    const readyz = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
    const readyzBody = await readyz.json();
    const refused = await enqueue();
    const failedTasks = await database.db.select().from(tasks).where(eq(tasks.studyKey, "later"));

    await redisProxy.up();
    const upAt = Date.now();
    let again = await register("192.0.2.10");
    while (again.status !== 200 && Date.now() - upAt < 10_000) {
      await sleep(50);
      again = await register("192.0.2.10");
    }
    const recoveredMs = Date.now() - upAt;
    const accepted = await enqueue();
    console.log(
      `[redis-faults] Redis unreachable for the API: rate-limited route ${limited.status} ${JSON.stringify(limited.body)}; ` +
        `readyz ${readyz.status} ${JSON.stringify(readyzBody)}; enqueue ${refused.status} ${JSON.stringify(refused.body)} ` +
        `in ${refused.ms} ms (${upAt - downAt} ms down); after Redis returned, rate-limited route 200 after ` +
        `${recoveredMs} ms, enqueue ${accepted.status} in ${accepted.ms} ms`,
    );

    expect(api.alive(), api.output()).toBe(true);
    // fails closed: the attempt the limiter cannot count is refused, with a JSON error and no internals
    expect(limited).toEqual({ status: 503, body: LIMITER_DOWN, retryAfter: "2" });
    expect(readyz.status).toBe(503);
    expect(readyzBody).toEqual({ error: "not ready: redis unavailable" });
    // the documented answer of the route, and the task it recorded is failed, not left queued
    expect(refused).toMatchObject({ status: 503, body: { error: "the job queue is unavailable; try again shortly" } });
    expect(refused.ms).toBeLessThan(10_000);
    expect(failedTasks).toHaveLength(1);
    expect(failedTasks[0]).toMatchObject({ status: "failed", error: "the job queue was unavailable" });
    // and everything works again once Redis is back
    expect(again.status).toBe(200);
    expect(recoveredMs).toBeLessThan(5_000);
    expect(accepted.status).toBe(200);
    const done = await waitForTask(
      database.db,
      accepted.body.task.id,
      ["completed", "failed", "canceled"],
      20_000,
      undefined,
      worker,
    );
    expect(done).toMatchObject({ status: "completed", processedCount: 100 });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  }, 60_000);
});
