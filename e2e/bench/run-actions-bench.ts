/**
 * Bulk run-actions benchmark: seeds a study and measures, in one run on one machine,
 *   (a) the reference algorithm in our stack: read one participant, evaluate, write it back,
 *       write progress — one at a time (measured on a sample, it is slow);
 *   (b) our pipeline end to end: POST through the API over HTTP, worker processes, until the
 *       Task is completed (these flag rules run in the database; for the every-participant case
 *       also with BULK_WRITES_IN_DATABASE=off, every batch in the engine);
 *   (c) the SQL floor: one server-side UPDATE making the same change;
 *   (c2) the two-connection floor: the same UPDATE split at the middle participant into two
 *       halves run at once on two connections, what two cores can do (the pipeline runs two
 *       worker processes, and PostgreSQL a backend for each);
 * for a rule set that changes every participant and one that changes 10% of them; then a study
 * timer tick over the same participants where 1% change (timer-tick-bench.ts). (b) and (c) each
 * start on a vacuumed table: a run that follows a full-table UPDATE otherwise pays for its dead
 * rows (every page must be checked for visibility), and which of the two came second would decide
 * the ratio. Fresh worker processes first run a few tasks on a small study of their own, so no
 * measured run pays for their start (connections, prepared statements, compiled code).
 *
 *   npm run bench                      100,000 participants
 *   npm run bench -- --participants 1000000
 *   BENCH_MILLION=1 npm run bench      adds a timer tick over a second study of 1,000,000
 *                                      (or: npm run bench -- --timer-million)
 *   npm run bench -- --cases tenth     only some of the cases: all, tenth, timer (default all three)
 *   npm run bench -- --repeat 5        (b), (c) and (c2) five times in turn; medians and each round's ratios
 *   npm run bench -- --wait poll       looks at the task every 5 ms instead of being told (LISTEN) it changed
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { Queue } from "bullmq";
import { pino } from "pino";
import { createBenchDatabase } from "./bench-database";
import { processArgs } from "./compiled";
import { createDb, runMigrations, tasks } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { confidentialIdOf } from "@studyflow/domain/participants";
import { createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { applyRules, compileRules, type Expression } from "@studyflow/engine";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { atLeast, recordBenchFigure } from "@studyflow/testkit/bench-summary";
import { createApp } from "@studyflow/api";
import { loadConfig } from "@studyflow/api/config";
import { measureCpu, type CpuSpan } from "./process-cpu";
import { pollUntilCompleted, watchTaskCompletion, type TaskCompletionWatch } from "./task-completion";
import { benchTimerTick, type TimerTickFigures } from "./timer-tick-bench";

const { values: args } = parseArgs({
  options: {
    participants: { type: "string", default: "100000" },
    workers: { type: "string", default: "2" },
    "reference-sample": { type: "string", default: "3000" },
    "timer-million": { type: "boolean", default: false },
    cases: { type: "string", default: "all,tenth,timer" },
    repeat: { type: "string", default: "1" },
    timeline: { type: "boolean", default: false },
    wait: { type: "string", default: "notify" },
  },
});
/**
 * How (b) learns its task completed: "notify" (told by a trigger's NOTIFY, then the row read) or
 * "poll" (the row read every 5 ms, which costs the process serving the API a query and a timer
 * each time); both in task-completion.ts.
 */
const WAIT = args.wait === "poll" ? "poll" : "notify";
/** Each pipeline run's timeline: POST answered, planned, each chunk done, finalised, seen completed. */
const TIMELINE = args.timeline;
/** Rounds of (b), (c) and (c2) per case; the medians are printed (a loaded machine varies from round to round). */
const REPEAT = Math.max(1, Number(args.repeat));
const CASES = new Set(args.cases.split(","));
/** A timer tick over a million participants as well: it seeds a second study, so it is asked for. */
const TIMER_MILLION = args["timer-million"] || process.env.BENCH_MILLION === "1";
const MILLION = 1_000_000;
const MILLION_STUDY = "bench-1m";
const N = Number(args.participants);
const WORKERS = Number(args.workers);
const REFERENCE_SAMPLE = Math.min(N, Number(args["reference-sample"]));
const STUDY = "bench";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const benchDatabase = await createBenchDatabase("sf_bench");
const url = benchDatabase.url;

const str = (value: string) => ({ dtype: "str", str: value });
const exp = (expression: Expression) => ({ dtype: "exp", exp: expression });
const call = (name: string, ...data: ReturnType<typeof str | typeof exp>[]): Expression => ({ name, data });

/** Each run writes a new value, so "changes every participant" holds on every repetition. */
function ruleSets(tag: string) {
  return {
    all: [call("IFTHEN", exp(call("checkEventType", str("CUSTOM"))), exp(call("UPDATE_FLAG", str("bulk"), str(tag))))],
    tenth: [
      call(
        "IFTHEN",
        exp(call("hasParticipantFlag", str("group"), str("g0"))),
        exp(call("UPDATE_FLAG", str("bulk"), str(tag))),
      ),
    ],
  };
}

/**
 * The r-th row inserted is participant number r × stride mod count. A real study's participant
 * ids are hashes, while its rows lie in the order participants entered: a range of ids, which a
 * bulk run's chunk reads, is spread over the whole table. Seeded in id order, a chunk's rows lay
 * on a few pages, and the chunks read about a fifth of the pages they read in a real study
 * (docs/benchmarks.md, "The 10 % bulk run depends on where the rows lie"). The stride shares no
 * factor with the count, so that every number is drawn once.
 */
function scatterFor(count: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let stride = 7_919;
  while (gcd(stride, count) !== 1) stride += 2;
  return stride;
}

async function seed(db: ReturnType<typeof createDb>, studyKey = STUDY, count = N) {
  await createStudy(db.db, { key: studyKey });
  // ~550 bytes of JSON per participant across the jsonb columns, like a real study's rows.
  const step = 50_000;
  for (let start = 0; start < count; start += step) {
    const end = Math.min(count, start + step) - 1;
    await db.sql`
      insert into participants (study_key, participant_id, study_status, entered_at, modified_at, flags,
                                assigned_surveys, last_submissions, messages, linking_codes)
      select ${studyKey}, 'p' || lpad(i::text, 9, '0'), 'active', 1700000000, 1700000000,
        jsonb_build_object('group', 'g' || (i % 10), 'consent', 'given', 'cohort', 'spring-2026', 'site', 'site-' || (i % 7)),
        jsonb_build_array(
          jsonb_build_object('surveyKey', 'weekly', 'validFrom', 1700000000, 'validUntil', 1800000000, 'category', 'normal'),
          jsonb_build_object('surveyKey', 'monthly', 'validFrom', 1700000000, 'validUntil', 1800000000, 'category', 'optional')),
        jsonb_build_object('intake', 1700000100, 'weekly', 1700600000, 'monthly', 1701000000),
        jsonb_build_array(jsonb_build_object('id', md5(i::text), 'type', 'reminder', 'scheduledFor', 1800000000)),
        jsonb_build_object('code', 'c' || i)
      from generate_series(${start}::bigint, ${end}::bigint) as row_number,
        lateral (select (row_number * ${scatterFor(count)}) % ${count} as i) as drawn
      order by row_number`;
  }
  await db.sql`vacuum analyze participants`;
}

/** (a) One participant at a time, as the reference does: read, evaluate, write back, write progress. */
async function referenceAlgorithm(db: ReturnType<typeof createDb>, rules: Expression[], secret: string) {
  const compiled = compileRules(rules);
  const [task] = await db.db
    .insert(tasks)
    .values({
      studyKey: STUDY,
      kind: "run-actions",
      input: { rules, dryRun: false },
      createdBy: "bench",
      status: "in_progress",
    })
    .returning();
  const env = {
    services: {} as never,
    clock: Date.now,
    random: Math.random,
    newId: () => randomBytes(12).toString("hex"),
  };
  const started = performance.now();
  let after = "";
  for (let processed = 0; processed < REFERENCE_SAMPLE; processed++) {
    const [row] = await db.sql<
      {
        participant_id: string;
        flags: Record<string, string>;
        assigned_surveys: never;
        last_submissions: never;
        messages: never;
        linking_codes: never;
        current_study_session: string;
        entered_at: string;
        modified_at: string;
        study_status: string;
      }[]
    >`select * from participants where study_key = ${STUDY} and participant_id > ${after} order by participant_id limit 1`;
    if (!row) break;
    after = row.participant_id;
    await db.sql`update tasks set processed_count = ${processed + 1}, updated_at = now() where id = ${task!.id}`;
    const state = {
      participantId: row.participant_id,
      currentStudySession: row.current_study_session,
      enteredAt: Number(row.entered_at),
      modifiedAt: Number(row.modified_at),
      studyStatus: row.study_status,
      flags: row.flags,
      linkingCodes: row.linking_codes,
      assignedSurveys: row.assigned_surveys,
      lastSubmissions: row.last_submissions,
      messages: row.messages,
    };
    const outcome = await applyRules(
      compiled,
      state,
      {
        type: "CUSTOM",
        studyKey: STUDY,
        participantIDForConfidentialResponses: confidentialIdOf(secret, row.participant_id),
      },
      env,
    );
    if (outcome.changedPerRule.some(Boolean)) {
      await db.sql`update participants set flags = ${JSON.stringify(outcome.state.flags)}::text::jsonb, modified_at = ${Math.floor(Date.now() / 1000)}
        where study_key = ${STUDY} and participant_id = ${row.participant_id}`;
    }
  }
  const rate = REFERENCE_SAMPLE / ((performance.now() - started) / 1000);
  // Ends the stand-in task, so the pipeline's task of this study is not kept waiting behind it.
  await db.sql`update tasks set status = 'completed', updated_at = now() where id = ${task!.id}`;
  return rate;
}

/** The rows a floor UPDATE of the bench changes: every eligible participant, or the tenth in group g0. */
function floorRows(sql: ReturnType<typeof createDb>["sql"], tenth: boolean) {
  return sql`study_key = ${STUDY} and study_status not in ('accountDeleted', 'temporary')
      ${tenth ? sql`and flags ->> 'group' = 'g0'` : sql``}`;
}

interface FloorFigures {
  rate: number;
  changed: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** (c) The floor: one UPDATE on the server making the same change. */
async function sqlFloor(db: ReturnType<typeof createDb>, tag: string, tenth: boolean): Promise<FloorFigures> {
  const started = performance.now();
  const result = await db.sql`
    update participants set flags = flags || jsonb_build_object('bulk', ${tag}::text),
      modified_at = ${Math.floor(Date.now() / 1000)}, version = version + 1
    where ${floorRows(db.sql, tenth)}`;
  const seconds = (performance.now() - started) / 1000;
  return { rate: N / seconds, changed: result.count };
}

/**
 * (c2) The two-connection floor: the same UPDATE split at the middle participant over two
 * connections running at once, what two cores can do (the pipeline runs two workers).
 */
async function twoConnectionFloor(db: ReturnType<typeof createDb>, tag: string, tenth: boolean): Promise<FloorFigures> {
  const [middle] = await db.sql<{ participant_id: string }[]>`
    select participant_id from participants
    where study_key = ${STUDY} and study_status not in ('accountDeleted', 'temporary')
    order by participant_id offset ${Math.floor(N / 2)} limit 1`;
  const split = middle?.participant_id ?? "";
  // a client of one connection each, connected before the clock starts
  const halves = [createDb(url, { max: 1 }), createDb(url, { max: 1 })];
  try {
    await Promise.all(halves.map((half) => half.sql`select 1`));
    const nowSeconds = Math.floor(Date.now() / 1000);
    const started = performance.now();
    const results = await Promise.all(
      halves.map(
        ({ sql }, half) => sql`
          update participants set flags = flags || jsonb_build_object('bulk', ${tag}::text),
            modified_at = ${nowSeconds}, version = version + 1
          where ${floorRows(sql, tenth)} and ${half === 0 ? sql`participant_id < ${split}` : sql`participant_id >= ${split}`}`,
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    return { rate: N / seconds, changed: results.reduce((sum, result) => sum + result.count, 0) };
  } finally {
    await Promise.all(halves.map((half) => half.close()));
  }
}

interface WorkerProcess {
  child: ChildProcess;
  peakRssKb: () => Promise<number>;
}

async function stopWorkers(workers: readonly WorkerProcess[]) {
  await Promise.all(
    workers.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}

async function startWorkers(
  prefix: string,
  resultDir: string,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess[]> {
  const workerArgs = await processArgs("worker/index");
  return Promise.all(
    Array.from({ length: WORKERS }, () => {
      // BENCH_WORKER_PROFILE=<dir>: a CPU profile of each worker process (node --cpu-prof)
      const profiling = process.env.BENCH_WORKER_PROFILE
        ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_WORKER_PROFILE}`]
        : [];
      const child = spawn(process.execPath, [...profiling, ...workerArgs], {
        env: {
          ...process.env,
          NODE_ENV: "production",
          DATABASE_URL: url,
          REDIS_URL: redisUrl,
          QUEUE_PREFIX: prefix,
          RESULT_DIR: resultDir,
          WORKER_CONCURRENCY: "1",
          HEALTH_PORT: "0",
          LOG_LEVEL: "warn",
          ...extraEnv,
        },
        stdio: ["ignore", "ignore", "inherit"],
      });
      return new Promise<WorkerProcess>((resolve) => {
        // The worker needs a moment to connect; give it before the first job arrives.
        setTimeout(
          () =>
            resolve({
              child,
              peakRssKb: async () => {
                const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
                return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
              },
            }),
          1_500,
        );
      });
    }),
  );
}

/** Set in main when the bench is told of task changes (--wait notify); else pipeline polls. */
let watch: TaskCompletionWatch | undefined;

async function pipeline(
  db: ReturnType<typeof createDb>,
  baseUrl: string,
  token: string,
  rules: Expression[],
  studyKey = STUDY,
  count = N,
): Promise<{ rate: number; postMs: number; changed: number[]; timeline: string }> {
  const started = performance.now();
  const startedAt = performance.timeOrigin + started;
  const response = await fetch(`${baseUrl}/v1/studies/${studyKey}/run-actions/participants/`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ rules }),
  });
  const postMs = performance.now() - started;
  if (response.status !== 200) throw new Error(`POST answered ${response.status}: ${await response.text()}`);
  const { task } = (await response.json()) as { task: { id: string } };
  if (watch) await watch.completed(task.id);
  else await pollUntilCompleted(db, task.id);
  const seconds = (performance.now() - started) / 1000;
  const result = await fetch(`${baseUrl}/v1/studies/${studyKey}/run-actions/participants/task/${task.id}/result`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const document = (await result.json()) as { participantStateChangedPerRule: number[] };
  return {
    rate: count / seconds,
    postMs,
    changed: document.participantStateChangedPerRule,
    timeline: TIMELINE ? await timelineOf(db, task.id, startedAt, seconds * 1000) : "",
  };
}

/**
 * When each stage of a task ended, in ms from the POST's start: the POST answered (the task row's
 * created_at is the API transaction's start), planned (started_at), each chunk's last batch, the
 * task finalised, and the bench seeing it completed. Worker and bench share the machine's clock.
 */
async function timelineOf(db: ReturnType<typeof createDb>, taskId: string, startedAt: number, seenMs: number) {
  const [task] = await db.sql<{ created: number; planned: number; finished: number }[]>`
    select extract(epoch from created_at) * 1000 as created, extract(epoch from started_at) * 1000 as planned,
      extract(epoch from finished_at) * 1000 as finished
    from tasks where id = ${taskId}`;
  const chunks = await db.sql<{ done: number }[]>`
    select extract(epoch from updated_at) * 1000 as done from task_chunks where task_id = ${taskId} order by done`;
  const at = (epochMs: number | undefined) => (Number(epochMs) - startedAt).toFixed(0);
  return (
    `created ${at(task?.created)}, planned ${at(task?.planned)}, chunks done ${chunks.map((chunk) => at(chunk.done)).join(" ")}, ` +
    `finalised ${at(task?.finished)}, seen ${seenMs.toFixed(0)} ms`
  );
}

/**
 * A study each fresh set of workers runs a few tasks on first, so no measured run pays for their
 * start: its two chunks (a bounded one and the open-ended last) give each worker's connections the
 * statements of both kinds of chunk, prepared, as a worker that has been running for a while has them.
 */
const WARM_UP_STUDY = "bench-warm-up";
const WARM_UP_PARTICIPANTS = 26_000;

async function warmUp(db: ReturnType<typeof createDb>, baseUrl: string, token: string) {
  for (let i = 0; i < 6; i++) {
    const rules = ruleSets(`warm-up-${i}`);
    await pipeline(db, baseUrl, token, i % 2 === 0 ? rules.all : rules.tenth, WARM_UP_STUDY, WARM_UP_PARTICIPANTS);
  }
}

/** POST latency on its own: several POSTs, each canceled at once; median and worst. */
async function postLatency(baseUrl: string, token: string, rules: Expression[], samples = 7) {
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const timings: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/studies/${STUDY}/run-actions/participants/`, {
      method: "POST",
      headers,
      body: JSON.stringify({ rules, dryRun: true }),
    });
    timings.push(performance.now() - started);
    const { task } = (await response.json()) as { task: { id: string } };
    await fetch(`${baseUrl}/v1/studies/${STUDY}/run-actions/participants/task/${task.id}/cancel`, {
      method: "POST",
      headers,
    });
  }
  const sorted = [...timings].sort((a, b) => a - b);
  // The first POST pays for JIT and connection set-up; it is kept out of the median, not hidden.
  return { first: timings[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}

const fmt = (value: number) => Math.round(value).toLocaleString("en-US");

function printTimerTick(figures: TimerTickFigures, runActionsRate: number) {
  recordBenchFigure({
    bench: "run-actions",
    figure: `timer tick, 1 % changes, b/c (${fmt(figures.participants)} participants)`,
    target: "",
    result: `${(figures.rate / figures.floorRate).toFixed(2)} (${fmt(figures.rate)} against ${fmt(figures.floorRate)} participants/s)`,
  });
  console.log(`\n[timer tick, ${fmt(figures.participants)} participants, ${fmt(figures.expired)} (1%) change]`);
  console.log(
    `  (b) studyflow timer tick  ${fmt(figures.rate).padStart(10)} participants/s   (${figures.seconds.toFixed(1)} s scan to completed, changed per rule ${JSON.stringify(figures.changedPerRule)})`,
  );
  console.log(`  (c) SQL floor             ${fmt(figures.floorRate).padStart(10)} participants/s`);
  console.log(`  (c2) two connections      ${fmt(figures.twoConnectionFloorRate).padStart(10)} participants/s`);
  const versusRun =
    runActionsRate > 0 ? `tick / run-actions (10% change) = ${(figures.rate / runActionsRate).toFixed(2)}×   ` : "";
  console.log(
    `  ${versusRun}b/c = ${(figures.rate / figures.floorRate).toFixed(2)}×   b/c2 = ${(figures.rate / figures.twoConnectionFloorRate).toFixed(2)}×`,
  );
}

async function main() {
  const resultDir = await mkdtemp(path.join(tmpdir(), "sf-bench-results-"));
  const prefix = `sf-bench-${randomBytes(4).toString("hex")}`;
  const db = createDb(url, { max: 4 });
  let workers: WorkerProcess[] = [];
  let server: ReturnType<typeof serve> | undefined;
  const redis = createRedisConnection(redisUrl, "producer");
  const queue = new Queue(TASKS_QUEUE, { connection: createRedisConnection(redisUrl, "producer"), prefix });
  try {
    await runMigrations(url);
    console.log(`seeding ${fmt(N)} participants…`);
    await seed(db);
    await seed(db, WARM_UP_STUDY, WARM_UP_PARTICIPANTS);
    await grantPermission(db.db, "bench", WARM_UP_STUDY, "run-study-action");
    const [study] = await db.sql<{ secret: string }[]>`select secret from studies where key = ${STUDY}`;
    await grantPermission(db.db, "bench", STUDY, "run-study-action");
    if (WAIT === "notify") watch = await watchTaskCompletion(db);

    const config = loadConfig({
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: "silent",
      RESULT_DIR: resultDir,
    });
    const apiDb = createDb(url, { max: 10 });
    const app = createApp({
      clock: systemClock,
      config,
      database: apiDb,
      redis,
      taskQueue: queue,
      logger: pino({ level: "silent" }),
    });
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
    });
    const token = await mintManagementToken({
      now: Date.now(),
      subject: "bench",
      isAdmin: false,
      secret: config.MANAGEMENT_JWT_SECRET,
    });

    console.log(
      `\nrun-actions benchmark: ${fmt(N)} participants, ${WORKERS} worker process(es), reference sampled on ${fmt(REFERENCE_SAMPLE)}`,
    );
    const latency = await postLatency(`http://127.0.0.1:${port}`, token, ruleSets("latency").all);
    console.log(
      `POST latency: median ${latency.median.toFixed(1)} ms, max ${latency.max.toFixed(1)} ms (first, cold: ${latency.first.toFixed(1)} ms)`,
    );
    // Workers start after the latency probe: its tasks are canceled before anything picks them up,
    // so the probe measures the API, not planning work it set off. The first ones run every batch in
    // the engine, for the engine path's figure of the every-participant case.
    workers = await startWorkers(prefix, resultDir, CASES.has("all") ? { BULK_WRITES_IN_DATABASE: "off" } : {});
    await warmUp(db, `http://127.0.0.1:${port}`, token);
    let round = 0;
    let tenthRate = 0;
    let engineRss: number[] = [];
    for (const kind of (["all", "tenth"] as const).filter((name) => CASES.has(name))) {
      const label = kind === "all" ? "changes every participant" : "changes 10% of participants";
      const a = await referenceAlgorithm(db, ruleSets(`ref-${round++}`)[kind], study!.secret);
      await db.sql`vacuum analyze participants`;
      let engine: Awaited<ReturnType<typeof pipeline>> | undefined;
      if (kind === "all") {
        engine = await pipeline(db, `http://127.0.0.1:${port}`, token, ruleSets(`engine-${round++}`)[kind]);
        engineRss = await Promise.all(workers.map((worker) => worker.peakRssKb()));
        await stopWorkers(workers);
        workers = await startWorkers(prefix, resultDir);
        await warmUp(db, `http://127.0.0.1:${port}`, token);
        await db.sql`vacuum analyze participants`;
      }
      // (b), (c) and (c2) in turn, --repeat times; the figures printed are the medians of the rounds
      const rounds: {
        b: Awaited<ReturnType<typeof pipeline>>;
        c: FloorFigures;
        c2: FloorFigures;
        cpu: { b: CpuSpan; c: CpuSpan };
      }[] = [];
      const workerPids = () => workers.flatMap(({ child }) => (child.pid === undefined ? [] : [child.pid]));
      for (let repetition = 0; repetition < REPEAT; repetition++) {
        let stop = await measureCpu(db, workerPids());
        const b = await pipeline(db, `http://127.0.0.1:${port}`, token, ruleSets(`run-${round++}`)[kind]);
        const cpuB = await stop();
        await db.sql`vacuum analyze participants`;
        stop = await measureCpu(db, workerPids());
        const c = await sqlFloor(db, `floor-${round++}`, kind === "tenth");
        const cpuC = await stop();
        await db.sql`vacuum analyze participants`;
        const c2 = await twoConnectionFloor(db, `floor-${round++}`, kind === "tenth");
        await db.sql`vacuum analyze participants`;
        rounds.push({ b, c, c2, cpu: { b: cpuB, c: cpuC } });
        if (TIMELINE) console.log(`  round ${repetition + 1}: ${b.timeline}`);
      }
      const b = { ...rounds[0]!.b, rate: median(rounds.map((r) => r.b.rate)) };
      const c = { ...rounds[0]!.c, rate: median(rounds.map((r) => r.c.rate)) };
      const c2 = { ...rounds[0]!.c2, rate: median(rounds.map((r) => r.c2.rate)) };
      console.log(
        `\n[${label}]${REPEAT > 1 ? ` (medians of ${REPEAT} rounds; ratios: the median of the rounds')` : ""}`,
      );
      console.log(`  (a) reference algorithm   ${fmt(a).padStart(10)} participants/s`);
      console.log(
        `  (b) studyflow pipeline    ${fmt(b.rate).padStart(10)} participants/s   (POST ${b.postMs.toFixed(1)} ms, changed per rule ${JSON.stringify(b.changed)})`,
      );
      console.log(
        `  (c) SQL floor             ${fmt(c.rate).padStart(10)} participants/s   (${fmt(c.changed)} rows updated)`,
      );
      console.log(
        `  (c2) two connections      ${fmt(c2.rate).padStart(10)} participants/s   (the same UPDATE split in two halves at once, ${fmt(c2.changed)} rows)`,
      );
      // each round's pipeline against the floors measured right after it; the median of those ratios
      const versusC = median(rounds.map((r) => r.b.rate / r.c.rate));
      const versusC2 = median(rounds.map((r) => r.b.rate / r.c2.rate));
      console.log(
        `  b/a = ${(b.rate / a).toFixed(1)}×   b/c = ${versusC.toFixed(2)}×   b/c2 = ${versusC2.toFixed(2)}×`,
      );
      const each = (value: (r: (typeof rounds)[number]) => number, digits = 2) =>
        rounds.map((r) => value(r).toFixed(digits)).join(" ");
      if (REPEAT > 1) {
        console.log(`  per round: b/c ${each((r) => r.b.rate / r.c.rate)}   b/c2 ${each((r) => r.b.rate / r.c2.rate)}`);
      }
      // where the time went: CPU per run of the database's backends, the workers and the API with the polling
      const cpuMedian = (part: keyof CpuSpan, run: "b" | "c") => median(rounds.map((r) => r.cpu[run][part])).toFixed(0);
      console.log(
        `  CPU ms (medians): PostgreSQL b ${cpuMedian("postgresMs", "b")} (workers' backends ${cpuMedian("workerBackendsMs", "b")})` +
          ` / c ${cpuMedian("postgresMs", "c")} (b/c per round ${each((r) => r.cpu.b.postgresMs / r.cpu.c.postgresMs)}),` +
          ` workers ${cpuMedian("workersMs", "b")}, API and polling ${cpuMedian("benchMs", "b")}`,
      );
      if (engine) {
        console.log(
          `  (b) in the engine         ${fmt(engine.rate).padStart(10)} participants/s   (BULK_WRITES_IN_DATABASE=off, b/c = ${(engine.rate / c.rate).toFixed(2)}×, b/c2 = ${(engine.rate / c2.rate).toFixed(2)}×)`,
        );
      }
      const measured = `${kind === "tenth" ? "10 %" : "every participant"} changes`;
      const participants = `${fmt(N)} participants${REPEAT > 1 ? `, median of ${REPEAT} rounds` : ""}`;
      recordBenchFigure({
        bench: "run-actions",
        figure: `${measured}, b/c (${participants})`,
        result: `${versusC.toFixed(2)} (${fmt(b.rate)} against ${fmt(c.rate)} participants/s)`,
        // issue 37 sets the target on the 10 % case; the all-change case is judged against c2 there
        ...(kind === "tenth" ? atLeast(versusC, 0.8) : { target: "" }),
      });
      recordBenchFigure({
        bench: "run-actions",
        figure: `${measured}, b/c2 (${participants})`,
        target: "",
        result: `${versusC2.toFixed(2)} (against ${fmt(c2.rate)} participants/s on two connections)`,
      });
      if (kind === "tenth") tenthRate = b.rate;
    }

    // The study timer: a tick over the same participants, then (asked for) over a million.
    const readResult = (studyKey: string) => async (taskId: string) => {
      const response = await fetch(
        `http://127.0.0.1:${port}/v1/studies/${studyKey}/run-actions/participants/task/${taskId}/result`,
        { headers: { Authorization: `Bearer ${token}` } },
      );
      if (response.status !== 200) throw new Error(`result answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as { participantStateChangedPerRule: number[] };
    };
    if (CASES.has("timer"))
      printTimerTick(await benchTimerTick(db, url, queue, STUDY, N, readResult(STUDY)), tenthRate);
    if (TIMER_MILLION) {
      console.log(`\nseeding ${fmt(MILLION)} participants for the timer tick…`);
      await seed(db, MILLION_STUDY, MILLION);
      await grantPermission(db.db, "bench", MILLION_STUDY, "run-study-action");
      printTimerTick(
        await benchTimerTick(db, url, queue, MILLION_STUDY, MILLION, readResult(MILLION_STUDY)),
        tenthRate,
      );
    }
    const peaks = await Promise.all(workers.map((worker) => worker.peakRssKb()));
    const mb = (kbs: number[]) => kbs.map((kb) => `${(kb / 1024).toFixed(0)} MB`).join(", ");
    console.log(`\nworker peak RSS: ${mb(peaks)} (engine path: ${mb(engineRss)})`);
    await apiDb.close();
  } finally {
    await watch?.close().catch(() => undefined);
    for (const worker of workers) worker.child.kill("SIGTERM");
    server?.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await db.close();
    await rm(resultDir, { recursive: true, force: true });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await benchDatabase.drop();
  }
}

await main();
process.exit(0);
