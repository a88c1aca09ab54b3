/**
 * PostgreSQL faults against the real processes: every backend of a process terminated
 * (pg_terminate_backend, as a database restart or failover cuts them) while it works. Nothing
 * may be lost or doubled, and the process must stay up: it answers cleanly while the database
 * is gone and resumes on its own.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_MANAGEMENT_JWT_SECRET } from "@studyflow/config";
import { surveyResponses, participants } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { addSyntheticParticipants, createStudy, grantPermission, setStudyRules } from "@studyflow/domain/study-setup";
import {
  call,
  createTestDatabase,
  deletePrefix,
  createTestRedis,
  num,
  onEvent,
  str,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import {
  appliedPerParticipant,
  chunksOf,
  filesBelow,
  freePort,
  loggedErrors,
  runActionsProducer,
  sleep,
  startChild,
  taskRow,
  terminateBackends,
  waitForOk,
  waitForTask,
  type ChildApp,
} from "./fault-harness";

const NOW_S = Math.floor(Date.now() / 1000);
/** The API's answer when the database is out of reach, and when a COMMIT went unanswered. */
const UNAVAILABLE = { error: "the database is unavailable; try again shortly" };
const COMMIT_UNKNOWN = {
  error:
    "the database connection was lost while this change was being saved; it may have been saved, so check before repeating it",
};
/** The application_name the API entry (apps/api/src/index.ts) gives its pool. */
const API_APPLICATION_NAME = "studyflow-api";

describe("the API under submit load while its PostgreSQL backends are terminated", () => {
  const STUDY = "load";
  const PARTICIPANTS = 200;
  const CONCURRENCY = 8;
  const WAVES = 5;
  const WAVE_INTERVAL_MS = 600;
  const REQUEST_TIMEOUT_MS = 10_000;
  /** The API entry's default DATABASE_POOL_SIZE, set explicitly. */
  const POOL_SIZE = 10;
  let database: TestDatabase;
  let admin: postgres.Sql;
  let api: ChildApp;
  let base: string;
  let token: string;
  const prefix = uniqueQueuePrefix();

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    await createStudy(database.db, { key: STUDY });
    // Every stored response adds one survey to its participant: state and responses must agree.
    await setStudyRules(
      database.db,
      STUDY,
      [onEvent("SUBMIT", call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")))],
      "test",
    );
    await addSyntheticParticipants(database.db, { studyKey: STUDY, count: PARTICIPANTS, enteredAt: NOW_S });
    await grantPermission(database.db, "loader", STUDY, "edit-participant-data");
    token = await mintManagementToken({
      now: Date.now(),
      subject: "loader",
      isAdmin: false,
      secret: DEV_MANAGEMENT_JWT_SECRET,
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The API's own entry, as compose runs it: its pool, its unhandled-error handler.
    api = startChild("apps/api/src/index.ts", {
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      SHUTDOWN_TIMEOUT_MS: "3000",
      LOG_LEVEL: "error",
    });
    await waitForOk(`${base}/readyz`, api);
  });
  afterAll(async () => {
    const ended = await api?.stop();
    await admin?.end();
    const redis = createTestRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await database?.drop();
    // Its graceful shutdown: no request is left hanging to hold it up.
    expect(ended, api?.output()).toEqual({ code: 0, signal: null });
  });

  interface Outcome {
    requestId: string;
    participantId: string;
    sentAt: number;
    answeredAt: number;
    status: number;
    body: unknown;
    retryAfter: string | null;
    /** A transport failure or timeout: never acceptable. */
    failure?: string;
  }

  async function submit(requestId: string, participantId: string): Promise<Outcome> {
    const sentAt = Date.now();
    try {
      const response = await fetch(`${base}/v1/studies/${STUDY}/participants/${participantId}/responses`, {
        method: "POST",
        // the API takes a sane X-Request-Id as the request's id: its log lines name the request
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "X-Request-Id": requestId },
        body: JSON.stringify({
          key: "weekly-check",
          responses: [{ key: "q1", response: { key: "q1", value: requestId } }],
          context: { requestId },
        }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text: the assertion below shows it
      }
      const retryAfter = response.headers.get("retry-after");
      return { requestId, participantId, sentAt, answeredAt: Date.now(), status: response.status, body, retryAfter };
    } catch (error) {
      const failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return {
        requestId,
        participantId,
        sentAt,
        answeredAt: Date.now(),
        status: 0,
        body: null,
        retryAfter: null,
        failure,
      };
    }
  }

  it("answers every request 200 or with a clean JSON error, loses and doubles nothing, and resumes", async () => {
    const outcomes: Outcome[] = [];
    let sequence = 0;
    let stop = false;
    const load = async () => {
      while (!stop) {
        const n = sequence++;
        outcomes.push(await submit(`r-${n}`, `p${String(n % PARTICIPANTS).padStart(9, "0")}`));
      }
    };
    const loaders = Array.from({ length: CONCURRENCY }, () => load());

    await sleep(500);
    const waves: { at: number; terminated: number }[] = [];
    for (let wave = 0; wave < WAVES; wave++) {
      if (wave > 0) await sleep(WAVE_INTERVAL_MS);
      const terminated = await terminateBackends(admin, database.name, API_APPLICATION_NAME);
      waves.push({ at: Date.now(), terminated });
    }
    const lastWave = waves.at(-1)!.at;
    // The load goes on after the last wave until service is back (at most 10 s), and 1 s more.
    let recoveredAt: number | undefined;
    while (recoveredAt === undefined && Date.now() - lastWave < 10_000) {
      await sleep(20);
      recoveredAt = outcomes.find((o) => o.sentAt > lastWave && o.status === 200)?.answeredAt;
    }
    await sleep(1_000);
    stop = true;
    await Promise.all(loaders);

    // Then rounds of as many concurrent requests as the pool has connections, twice over, until
    // one round is answered 200 throughout: every connection of the pool has been used again.
    const rounds: number[][] = [];
    for (let round = 0; round < 5 && !rounds.at(-1)?.every((status) => status === 200); round++) {
      const answers = await Promise.all(
        Array.from({ length: 2 * POOL_SIZE }, (_, i) =>
          submit(`after-${round}-${i}`, `p${String(i).padStart(9, "0")}`),
        ),
      );
      outcomes.push(...answers);
      rounds.push(answers.map((answer) => answer.status));
    }
    const readyz = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });

    const byStatus = new Map<number, number>();
    for (const outcome of outcomes) byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
    const errors = new Map<string, number>();
    for (const outcome of outcomes.filter((o) => o.status !== 200)) {
      const key = `${outcome.status} ${JSON.stringify(outcome.body).replace(/request id [^)]+/, "request id …")}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
    const recoveryMs = recoveredAt === undefined ? undefined : recoveredAt - lastWave;
    // Failures of requests sent after the last wave: those whose connection the wave cut.
    const lateFailures = outcomes.filter((o) => o.sentAt > lastWave && o.status !== 200);
    const lastFailure = Math.max(lastWave, ...lateFailures.map((o) => o.answeredAt));
    console.log(
      `[database-faults] api: ${outcomes.length} requests, by status ${JSON.stringify(Object.fromEntries(byStatus))}; ` +
        `backends terminated per wave ${waves.map((w) => w.terminated).join(", ")}\n` +
        `  recovery: first 200 to a request sent after the last wave ${recoveryMs} ms after it; ` +
        `${lateFailures.length} later request(s) failed, the last ${lastFailure - lastWave} ms after it; ` +
        `rounds after the load ${JSON.stringify(rounds.map((round) => round.filter((status) => status !== 200).length))} failed\n` +
        `  answers other than 200: ${JSON.stringify(Object.fromEntries(errors))}\n` +
        `  logged server-side (distinct): ${JSON.stringify(loggedErrors(api.stdout()).slice(0, 6))}`,
    );

    // the process stayed up and answers
    expect(api.alive(), api.output()).toBe(true);
    expect(readyz.status).toBe(200);
    expect(waves.filter((wave) => wave.terminated > 0).length).toBeGreaterThanOrEqual(WAVES - 1);
    // every request answered in time: no broken connection, no hang
    expect(outcomes.filter((o) => o.failure !== undefined).map((o) => `${o.requestId}: ${o.failure}`)).toEqual([]);
    // 200, or 503 with Retry-After and a JSON error without internals
    for (const outcome of outcomes.filter((o) => o.status !== 200)) {
      expect(outcome.status, JSON.stringify(outcome)).toBe(503);
      expect(outcome.retryAfter, JSON.stringify(outcome)).toMatch(/^[1-9]\d*$/);
      expect([UNAVAILABLE, COMMIT_UNKNOWN], JSON.stringify(outcome)).toContainEqual(outcome.body);
    }
    expect(byStatus.get(200)).toBeGreaterThan(CONCURRENCY * 10);
    expect(outcomes.filter((o) => o.status !== 200).length).toBeGreaterThan(0);
    // service resumes at once, and the pool is whole again within a round or two
    expect(recoveryMs).toBeDefined();
    expect(recoveryMs).toBeLessThan(5_000);
    // at most once per connection: the query the wave cut; a reconnected connection works at once
    expect(lateFailures.length).toBeLessThanOrEqual(POOL_SIZE);
    expect(rounds.length).toBe(1);
    expect(
      rounds.at(-1)!.every((status) => status === 200),
      JSON.stringify(rounds),
    ).toBe(true);

    // Nothing lost, nothing doubled: one stored response per request answered 200, none for the others.
    const stored = await database.db
      .select({ requestId: sql<string>`${surveyResponses.context} ->> 'requestId'`, count: sql<number>`count(*)::int` })
      .from(surveyResponses)
      .groupBy(sql`1`);
    const storedCount = new Map(stored.map((row) => [row.requestId, row.count]));
    const doubled = stored.filter((row) => row.count !== 1);
    const lost = outcomes.filter((o) => o.status === 200 && storedCount.get(o.requestId) !== 1);
    const ghosts = outcomes.filter((o) => o.status !== 200 && storedCount.has(o.requestId));
    const answered = new Set(outcomes.map((o) => o.requestId));
    const unknown = stored.filter((row) => !answered.has(row.requestId));
    expect({ doubled, lost, unknown }).toEqual({ doubled: [], lost: [], unknown: [] });
    // A request answered 503 whose response is stored all the same: its backend was terminated
    // during COMMIT. PostgreSQL finished the commit, then the connection dropped before the API
    // heard so. The API cannot know and must say so, so the client checks before repeating it.
    console.log(`[database-faults] api: ${ghosts.length} request(s) answered 503 were stored (commit unanswered)`);
    for (const ghost of ghosts) expect(ghost.body, JSON.stringify(ghost)).toEqual(COMMIT_UNKNOWN);
    // and each participant's state took exactly the submissions stored for it
    const mismatched = await database.db.execute(sql`
      select p.participant_id, jsonb_array_length(p.assigned_surveys) as surveys, count(r.id)::int as responses
      from ${participants} p left join ${surveyResponses} r
        on r.study_key = p.study_key and r.participant_id = p.participant_id
      where p.study_key = ${STUDY}
      group by p.participant_id, p.assigned_surveys
      having jsonb_array_length(p.assigned_surveys) <> count(r.id)`);
    expect(mismatched).toEqual([]);
  });
});

/**
 * The failed job attempts in a fault-worker's log ("run-actions job attempt failed"): how many per
 * job, and how many per kind of error (the query cut, or the cut backend's error replayed later).
 */
function failedAttempts(output: string) {
  const perJob = new Map<string, number>();
  const perError = new Map<string, number>();
  for (const line of output.split("\n")) {
    if (!line.startsWith("{") || !line.includes("run-actions job attempt failed")) continue;
    const { jobId, err } = JSON.parse(line) as { jobId: string; err?: { message?: string } };
    perJob.set(jobId, (perJob.get(jobId) ?? 0) + 1);
    const kind = /terminating connection|CONNECTION_CLOSED|ECONNRESET/.exec(err?.message ?? "")?.[0] ?? "other";
    perError.set(kind, (perError.get(kind) ?? 0) + 1);
  }
  return { perJob, perError };
}

describe("a worker whose PostgreSQL backends are terminated mid-task", () => {
  const PARTICIPANTS = 3_000;
  const WAVES = 3;
  const APPLICATION_NAME = "sf-fault-worker";
  // Not idempotent: a participant applied twice has two surveys and two reports.
  const rules = [
    onEvent(
      "CUSTOM",
      call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
      call("INIT_REPORT", str("bulk-report")),
    ),
  ];
  let database: TestDatabase;
  let admin: postgres.Sql;
  let producer: ReturnType<typeof runActionsProducer>;
  let worker: ChildApp;
  let resultDir: string;
  const prefix = uniqueQueuePrefix();

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-db-faults-"));
    producer = runActionsProducer(prefix);
    for (const key of ["calm", "storm"]) {
      await createStudy(database.db, { key });
      await addSyntheticParticipants(database.db, { studyKey: key, count: PARTICIPANTS, enteredAt: NOW_S });
    }
    worker = startChild("e2e/test/fault-worker.ts", {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
      DB_APPLICATION_NAME: APPLICATION_NAME,
      BATCH_SIZE: "50",
      CHUNK_SIZE: "500",
      CONCURRENCY: "2",
    });
    await worker.waitForLine(/^ready$/, 60_000);
  });
  afterAll(async () => {
    const ended = await worker?.stop();
    await producer?.close();
    await admin?.end();
    const redis = createTestRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await database?.drop();
    await rm(resultDir, { recursive: true, force: true });
    expect(ended, worker?.output()).toEqual({ code: 0, signal: null });
  });

  it("completes the task exactly once, in the same process, every participant applied once", async () => {
    // The same task on a study of the same size, undisturbed, for comparison.
    const calmStarted = Date.now();
    const calm = await producer.createTask(database.db, "calm", rules);
    const calmDone = await waitForTask(
      database.db,
      calm.id,
      ["completed", "failed", "canceled"],
      60_000,
      undefined,
      worker,
    );
    const calmMs = Date.now() - calmStarted;
    expect(calmDone).toMatchObject({ status: "completed", processedCount: PARTICIPANTS });

    const started = Date.now();
    const storm = await producer.createTask(database.db, "storm", rules);
    const waves: { processed: number; terminated: number }[] = [];
    let nextWaveAt = 300;
    const done = await waitForTask(
      database.db,
      storm.id,
      ["completed", "failed", "canceled"],
      50_000,
      async (row) => {
        // Each wave once the worker has made progress since the last one, while the task still has work left.
        if (waves.length >= WAVES || row.status !== "in_progress") return;
        if (row.processedCount < nextWaveAt || row.processedCount > PARTICIPANTS - 300) return;
        const terminated = await terminateBackends(admin, database.name, APPLICATION_NAME);
        if (terminated === 0) return;
        waves.push({ processed: row.processedCount, terminated });
        nextWaveAt = row.processedCount + 600;
      },
      worker,
    );
    const stormMs = Date.now() - started;
    const chunks = await chunksOf(database.db, storm.id);
    const failed = failedAttempts(worker.stderr());
    const attempts = [...failed.perJob.values()].reduce((sum, count) => sum + count, 0);
    console.log(
      `[database-faults] worker: undisturbed task ${calmMs} ms; with ${waves.length} waves of terminated backends ` +
        `${stormMs} ms (waves at processed ${waves.map((w) => `${w.processed} (${w.terminated} backends)`).join(", ")}; ` +
        `${attempts} chunk-job attempts failed and were retried, at most ${Math.max(0, ...failed.perJob.values())} ` +
        `of one job; by error ${JSON.stringify(Object.fromEntries(failed.perError))})`,
    );

    expect(worker.alive(), worker.output()).toBe(true);
    expect(waves.length).toBe(WAVES);
    expect(done).toMatchObject({ status: "completed", processedCount: PARTICIPANTS, targetCount: PARTICIPANTS });
    expect(chunks.map((chunk) => chunk.status)).toEqual(chunks.map(() => "done"));
    expect(chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0)).toBe(PARTICIPANTS);
    expect(await appliedPerParticipant(database.db, "storm", "bulk-report")).toEqual({
      surveys: { participants: PARTICIPANTS, min: 1, max: 1 },
      reports: { participants: PARTICIPANTS, min: 1, max: 1 },
    });
    // one result document, of the whole task
    expect(await filesBelow(resultDir)).toEqual([`calm/${calm.id}.json`, `storm/${storm.id}.json`]);
    const result = JSON.parse(await readFile(path.join(resultDir, done.resultFile), "utf8"));
    expect(result).toMatchObject({ participantCount: PARTICIPANTS, participantStateChangedPerRule: [PARTICIPANTS] });
  }, 150_000);
});

describe("a worker killed while it finalises a task", () => {
  const PARTICIPANTS = 1_500;
  const rules = [onEvent("CUSTOM", call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")))];
  let database: TestDatabase;
  let producer: ReturnType<typeof runActionsProducer>;
  let resultDir: string;
  const workers: ChildApp[] = [];
  const prefix = uniqueQueuePrefix();
  const startWorker = (env: Record<string, string> = {}) => {
    const worker = startChild("e2e/test/fault-worker.ts", {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
      DB_APPLICATION_NAME: "sf-fault-worker",
      BATCH_SIZE: "100",
      CHUNK_SIZE: "500",
      CONCURRENCY: "2",
      ...env,
    });
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-finalize-faults-"));
    producer = runActionsProducer(prefix);
    await createStudy(database.db, { key: "final" });
    await addSyntheticParticipants(database.db, { studyKey: "final", count: PARTICIPANTS, enteredAt: NOW_S });
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await producer?.close();
    const redis = createTestRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await database?.drop();
    await rm(resultDir, { recursive: true, force: true });
  });

  it("after the last chunk and before the result file: a second worker completes it, one result file", async () => {
    // This worker SIGKILLs itself when it is about to write a result file, inside the finalising
    // transaction (the task row locked, every chunk done): see fault-worker.ts.
    const first = startWorker({ FAULT_KILL_BEFORE_RESULT_FILE: "1" });
    await first.waitForLine(/^ready$/, 60_000);
    const task = await producer.createTask(database.db, "final", rules);
    const ended = await first.exited;
    const killedAt = Date.now();
    expect(ended, first.output()).toEqual({ code: null, signal: "SIGKILL" });
    expect(first.output()).toContain(`finalizing final/${task.id}.json.`);

    // Killed exactly there: all the work done and counted, the task not completed, no result file.
    const atKill = await taskRow(database.db, task.id);
    expect(atKill).toMatchObject({ status: "in_progress", processedCount: PARTICIPANTS, resultFile: "" });
    const chunks = await chunksOf(database.db, task.id);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk) => chunk.status)).toEqual(chunks.map(() => "done"));
    expect(chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0)).toBe(PARTICIPANTS);
    expect(await filesBelow(resultDir)).toEqual([]);

    const second = startWorker();
    await second.waitForLine(/^ready$/, 60_000);
    const readyAt = Date.now();
    const done = await waitForTask(
      database.db,
      task.id,
      ["completed", "failed", "canceled"],
      30_000,
      undefined,
      second,
    );
    const completedAt = Date.now();
    console.log(
      `[database-faults] finalise: second worker ready ${readyAt - killedAt} ms after the kill; the stalled chunk job ` +
        `came back and the task completed ${completedAt - readyAt} ms after that (${completedAt - killedAt} ms in all; ` +
        `lockDuration 2000 ms, stalledInterval 1000 ms)`,
    );

    expect(done).toMatchObject({ status: "completed", processedCount: PARTICIPANTS, targetCount: PARTICIPANTS });
    expect(done.resultFile).toBe(`final/${task.id}.json`);
    expect(await filesBelow(resultDir)).toEqual([`final/${task.id}.json`]);
    const result = JSON.parse(await readFile(path.join(resultDir, done.resultFile), "utf8"));
    expect(result).toMatchObject({
      participantCount: PARTICIPANTS,
      participantStateChangedPerRule: [PARTICIPANTS],
      errorCount: 0,
      dryRun: false,
    });
    expect((await appliedPerParticipant(database.db, "final", "none")).surveys).toEqual({
      participants: PARTICIPANTS,
      min: 1,
      max: 1,
    });
    expect(second.alive(), second.output()).toBe(true);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  }, 150_000);
});
