/**
 * Response export benchmark: seeds a study with N responses of a weekly survey (~30 answer
 * columns, two uploaded versions, N/10 participants; export-seed.ts) and measures, in one run on
 * one machine,
 *   (a) the floor: PostgreSQL's own COPY … TO STDOUT (FORMAT csv) of the same rows' raw columns
 *       and JSON, streamed to this process (postgres.js) and counted;
 *   (b) studyflow end to end: POST …/data-exporter/responses?surveyKey=…&format=… through the API
 *       (in this process, over HTTP), worker processes until the Task is completed, then the
 *       result file downloaded through the API by curl (as psql reads (a)), asking for gzip as a
 *       browser or case-admin's proxy does (curl --compressed: the file is counted as unpacked);
 *       for the wide and long CSV layouts and JSON;
 *   (c) where the time goes: the same export's stages (read, parse, format, write) timed in this
 *       process (export-stages.ts).
 * It prints rows/s, the ratio to (a), the file size, each worker's peak RSS and the CPU seconds the
 * workers, PostgreSQL's backends and this process spent, per format; given several sizes it seeds a
 * study per size and prints how the workers' peak grew between them. The CPU seconds say where the
 * work goes even on a busy machine, where the rates say little.
 *
 *   npm run bench:export                                100,000 responses
 *   npm run bench:export -- --responses 1000000
 *   npm run bench:export -- --responses 100000,1000000  both, with the peak-RSS growth
 *                                                       (or BENCH_MILLION=1; `npm run bench` runs this
 *                                                       bench at its defaults after the run-actions one)
 *   npm run bench:export -- --formats wide              one format
 *   npm run bench:export -- --stages-only               the floor and the in-process stages only
 *   npm run bench:export -- --no-stages                 without the in-process stage breakdown
 *   npm run bench:export -- --gzip                      the exports with gzip=true (a .gz file)
 *   BENCH_WORKER_PROFILE=<dir> npm run bench:export     a CPU profile of each worker process
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { Queue } from "bullmq";
import { pino } from "pino";
import { createBenchDatabase } from "./bench-database";
import { seedExportStudy, type SeededExportStudy } from "./export-seed";
import { measureExportStages, type StageFigures } from "./export-stages";
import { settleHeap } from "./settle-heap";
import { watchTaskCompletion, type TaskCompletionWatch } from "./task-completion";
import { processKind } from "./compiled";
import { startWorkerProcesses, stopWorkerProcesses, type WorkerProcess } from "./worker-processes";
import { createDb, runMigrations } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { grantPermission } from "@studyflow/domain/study-setup";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { atLeast, recordBenchFigure } from "@studyflow/testkit/bench-summary";
import { createApp } from "@studyflow/api";
import { loadConfig } from "@studyflow/api/config";

const FORMATS = ["wide", "long", "json"] as const;
type Format = (typeof FORMATS)[number];

const { values: args } = parseArgs({
  allowNegative: true,
  options: {
    // BENCH_MILLION=1 (as for the run-actions bench): 100,000 and a million, with the RSS growth
    responses: { type: "string", default: process.env.BENCH_MILLION === "1" ? "100000,1000000" : "100000" },
    workers: { type: "string", default: "2" },
    formats: { type: "string", default: FORMATS.join(",") },
    /** Rows per batch of the in-process stage breakdown. */
    batch: { type: "string", default: "1000" },
    /** The in-process stage breakdown after each export; --no-stages leaves it out (it doubles a run). */
    stages: { type: "boolean", default: true },
    /** The floor and the in-process stages only, without the API and the workers (quick profiling). */
    "stages-only": { type: "boolean", default: false },
    /** Exports with gzip=true: the researcher's file is a .gz. */
    gzip: { type: "boolean", default: false },
  },
});
const SIZES = args.responses.split(",").map((size) => Number(size.replaceAll("_", "")));
if (SIZES.some((size) => !Number.isInteger(size) || size < 10)) {
  throw new Error(`--responses takes whole numbers of at least 10, comma separated: ${args.responses}`);
}
const WORKERS = Number(args.workers);
const STAGE_BATCH = Number(args.batch);
const STAGES_ONLY = args["stages-only"];
const STAGES = args.stages || STAGES_ONLY;
const GZIP = args.gzip;
const SELECTED_FORMATS = args.formats
  .split(",")
  .filter(Boolean)
  .map((format) => {
    if (!(FORMATS as readonly string[]).includes(format)) throw new Error(`--formats: unknown format "${format}"`);
    return format as Format;
  });
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Long enough for the slowest export of a million rows, polls and downloads included. */
const TOKEN_TTL_SECONDS = 6 * 3600;
/** Responses of the study every fresh worker exports once before the measured runs. */
const WARM_UP_RESPONSES = 2_000;

const fmt = (value: number) => Math.round(value).toLocaleString("en-US");
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
/** The machine's 1-minute load average: these figures are only comparable on a quiet machine. */
const load = () => loadavg()[0]!.toFixed(1);

interface Figures {
  label: string;
  rows: number;
  seconds: number;
  bytes: number;
  /** Peak RSS of each worker process in KiB, for the pipeline's rows. */
  workerPeakKb?: number[];
  cpu?: CpuSeconds;
  note?: string;
}

/** CPU seconds (user + system) spent during a measurement, by whom. */
interface CpuSeconds {
  workers: number;
  postgres: number;
  /** This process: the API's requests and the download, or counting COPY's bytes. */
  bench: number;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;
/** How often the CPU meter reads the backends: a backend that exits loses at most this much. */
const CPU_SAMPLE_MS = 200;

/** A process's CPU ticks (utime + stime) from /proc, or null once it is gone. */
async function cpuTicks(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (stat === null) return null;
  // the fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Measures the CPU the workers, the bench database's PostgreSQL backends and this process spend
 * until stop(). Backends are sampled every CPU_SAMPLE_MS, so that one that exits before the end
 * (psql's COPY) is still counted up to its last sample. `meterDb` is a pool of one connection of
 * its own, which the samples leave out: every other backend is then seen from the first sample on.
 */
function startCpuMeter(meterDb: ReturnType<typeof createDb>, workers: readonly WorkerProcess[]) {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const sample = async () => {
    const backends = await meterDb.sql<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    const pids = [
      ...backends.map(({ pid }) => `postgres:${pid}`),
      ...workers.flatMap(({ child }) => (child.pid === undefined ? [] : [`workers:${child.pid}`])),
    ];
    await Promise.all(
      pids.map(async (id) => {
        const ticks = await cpuTicks(Number(id.split(":")[1]));
        if (ticks === null) return;
        // a backend first seen now started during the measurement: all its ticks count
        if (!first.has(id)) first.set(id, started ? 0 : ticks);
        last.set(id, ticks);
      }),
    );
  };
  let started = false;
  const ready = sample().then(() => {
    started = true;
  });
  const bench = process.cpuUsage();
  let pending = Promise.resolve();
  const timer = setInterval(() => {
    pending = pending.then(sample, () => undefined);
  }, CPU_SAMPLE_MS);
  return {
    ready,
    async stop(): Promise<CpuSeconds> {
      clearInterval(timer);
      await pending;
      await sample();
      const used = process.cpuUsage(bench);
      const sum = (group: string) =>
        [...last].reduce((total, [id, ticks]) => (id.startsWith(group) ? total + ticks - first.get(id)! : total), 0) /
        TICKS_PER_SECOND;
      return { workers: sum("workers:"), postgres: sum("postgres:"), bench: (used.user + used.system) / 1e6 };
    },
  };
}

/**
 * Runs a client (psql, curl) with its output counted by `wc`, a process of its own: the bench's
 * process, which also serves the API, stays out of the data's path. Reading curl's output here
 * added 0.15-0.2 s to a 25 MB download (0.23-0.32 s to /dev/null, 0.4-0.5 s into this process).
 */
async function countedOutput(command: string, args: readonly string[]): Promise<{ bytes: number; lines: number }> {
  const child = spawn("bash", ["-c", 'set -o pipefail; "$@" | wc -lc', "bash", command, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let error = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (error += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`${command} exited with ${code}: ${error}`);
  const [lines, bytes] = out.trim().split(/\s+/).map(Number);
  return { bytes: bytes!, lines: lines! };
}

/**
 * (a) COPY of the same rows in the order the exports write them by default (arrival, then id; an
 * index serves it), counted by wc as psql writes it. The columns are what an export reads: the
 * response's ids, times, answers and context. psql consumes it:
 * postgres.js's COPY stream stalls now and then once paused (porsager/postgres#917, #499).
 */
async function copyBaseline(
  url: string,
  meterDb: ReturnType<typeof createDb>,
  study: SeededExportStudy,
): Promise<Figures> {
  const statement =
    `copy (select id, participant_id, version_id, opened_at, submitted_at, arrived_at, responses, context ` +
    `from survey_responses where study_key = ${literal(study.studyKey)} and key = ${literal(study.surveyKey)} ` +
    `order by arrived_at, id) to stdout (format csv)`;
  await settleHeap();
  const meter = startCpuMeter(meterDb, []);
  await meter.ready;
  const started = performance.now();
  const { bytes } = await countedOutput("psql", [url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", statement]);
  const seconds = (performance.now() - started) / 1000;
  return {
    label: "COPY csv (floor)",
    rows: study.responses,
    seconds,
    bytes,
    cpu: await meter.stop(),
    note: `load ${load()}`,
  };
}

/** The Task as the data-exporter routes show it (CASE's shape: a failure is `completed` with an `error`). */
interface TaskView {
  id: string;
  status: string;
  error?: string;
  /** studyflow's own status, beside CASE's two. */
  studyflowStatus?: string;
}

/** (b) One export through the API and the workers, until completed, then its file downloaded. */
/** The size of a task's file as the store sends it (a gzip file's compressed bytes). */
async function storedSize(meterDb: ReturnType<typeof createDb>, taskId: string): Promise<number> {
  const [file] = await meterDb.sql<{ size: string }[]>`select size from stored_files where task_id = ${taskId}`;
  return Number(file?.size ?? NaN);
}

async function exportThroughApi(
  baseUrl: string,
  token: string,
  meterDb: ReturnType<typeof createDb>,
  study: SeededExportStudy,
  format: Format,
  workers: readonly WorkerProcess[],
  completion: TaskCompletionWatch,
): Promise<Figures> {
  await Promise.all(workers.map((worker) => worker.resetPeak()));
  await settleHeap();
  const meter = startCpuMeter(meterDb, workers);
  await meter.ready;
  const headers = { Authorization: `Bearer ${token}` };
  const exporter = `${baseUrl}/v1/studies/${study.studyKey}/data-exporter/responses`;
  const started = performance.now();
  const response = await fetch(`${exporter}?surveyKey=${study.surveyKey}&format=${format}${GZIP ? "&gzip=true" : ""}`, {
    method: "POST",
    headers,
  });
  if (response.status >= 300) throw new Error(`POST ${format} answered ${response.status}: ${await response.text()}`);
  const { task } = (await response.json()) as { task: TaskView };
  // told by the database when the task's status changes, then asked of the API once
  await completion.completed(task.id);
  const status = await fetch(`${exporter}/task/${task.id}`, { headers });
  if (status.status !== 200) throw new Error(`task status answered ${status.status}: ${await status.text()}`);
  const { task: current } = (await status.json()) as { task: TaskView };
  if (current.error || current.status !== "completed")
    throw new Error(`${format} export task ${current.studyflowStatus ?? current.status}: ${current.error ?? ""}`);
  const completedAt = performance.now();
  const workerPeakKb = await Promise.all(workers.map((worker) => worker.peakRssKb()));
  // curl downloads, as psql reads the floor's COPY: a client process of its own, whose output wc
  // counts. A fetch in this process would put the HTTP client's work (about 1 CPU s per 400 MB) on
  // the thread that also serves the download. It asks for gzip, as a browser, case-admin's proxy
  // (Node's fetch) and most HTTP libraries do, and unpacks what it gets: wc counts the file.
  const { bytes, lines } = await countedOutput("curl", [
    "--silent",
    "--show-error",
    "--fail",
    "--compressed",
    "-H",
    `Authorization: ${headers.Authorization}`,
    `${exporter}/task/${task.id}/result`,
  ]);
  const finished = performance.now();
  const cpu = await meter.stop();
  // A wide CSV holds a header and a line per response (no answer here holds a line break).
  if (format === "wide" && lines !== study.responses + 1) {
    throw new Error(`the wide export has ${lines} lines, expected ${study.responses + 1}`);
  }
  return {
    label: `studyflow ${format}${GZIP ? " gzip" : ""}`,
    rows: study.responses,
    seconds: (finished - started) / 1000,
    bytes,
    workerPeakKb,
    cpu,
    note:
      `${((completedAt - started) / 1000).toFixed(1)} s to completed + ${((finished - completedAt) / 1000).toFixed(1)} s download` +
      `, ${mb(await storedSize(meterDb, task.id))} sent gzip, load ${load()}`,
  };
}

function printStages(stages: StageFigures[], floor: Figures) {
  if (stages.length === 0) return;
  console.log(
    `  where the time goes, in one process (batches of ${fmt(STAGE_BATCH)} rows; seconds; format reads the answers' JSON text):`,
  );
  console.log(
    `  ${"".padEnd(20)} ${"read".padStart(7)} ${"format".padStart(7)} ${"write".padStart(7)} ${"total".padStart(7)} ${"rows/s".padStart(10)} ${"× COPY".padStart(7)}`,
  );
  const floorRate = floor.rows / floor.seconds;
  for (const stage of stages) {
    const total = stage.readSeconds + stage.formatSeconds + stage.writeSeconds;
    const cells = [stage.readSeconds, stage.formatSeconds, stage.writeSeconds, total];
    console.log(
      `  ${`stages ${stage.format}`.padEnd(20)} ${cells.map((cell) => cell.toFixed(2).padStart(7)).join(" ")} ` +
        `${fmt(stage.rows / total).padStart(10)} ${(stage.rows / total / floorRate).toFixed(2).padStart(7)}`,
    );
  }
}

function printTable(
  study: SeededExportStudy,
  averageJsonBytes: number,
  floor: Figures,
  rows: Figures[],
  idleKb: number[],
) {
  console.log(
    `\n[${fmt(study.responses)} responses of "${study.surveyKey}" (${fmt(averageJsonBytes)} bytes of JSON each on average), ` +
      `${fmt(study.participants)} participants, ${WORKERS} worker process(es)` +
      `${idleKb.length > 0 ? `, idle at ${idleKb.map((kb) => `${(kb / 1024).toFixed(0)} MB`).join(", ")}` : ""}]`,
  );
  const rate = (figures: Figures) => figures.rows / figures.seconds;
  console.log(
    `  ${"".padEnd(20)} ${"rows/s".padStart(10)} ${"× COPY".padStart(7)} ${"time".padStart(8)} ${"file".padStart(10)}   ` +
      `${"CPU s: workers  postgres  bench".padEnd(32)}   worker peak RSS`,
  );
  for (const figures of [floor, ...rows]) {
    const peaks = figures.workerPeakKb?.map((kb) => `${(kb / 1024).toFixed(0)} MB`).join(", ") ?? "";
    const cpu = figures.cpu
      ? `${figures.cpu.workers.toFixed(1).padStart(15)} ${figures.cpu.postgres.toFixed(1).padStart(9)} ${figures.cpu.bench.toFixed(1).padStart(6)}`
      : "";
    console.log(
      `  ${figures.label.padEnd(20)} ${fmt(rate(figures)).padStart(10)} ${(rate(figures) / rate(floor)).toFixed(2).padStart(7)} ` +
        `${`${figures.seconds.toFixed(1)} s`.padStart(8)} ${mb(figures.bytes).padStart(10)}   ${cpu.padEnd(32)}   ${peaks}` +
        `${figures.note ? `   (${figures.note})` : ""}`,
    );
  }
  for (const figures of rows) {
    const ratio = rate(figures) / rate(floor);
    // issue 37 sets 0.8 × COPY for the wide and long CSV; the JSON file informs
    const targeted = /^studyflow (wide|long)$/.test(figures.label);
    recordBenchFigure({
      bench: "export",
      figure: `${figures.label.replace(/^studyflow /, "")} × COPY at ${fmt(study.responses)} responses`,
      result: `${ratio.toFixed(2)} (${figures.seconds.toFixed(1)} s against COPY's ${floor.seconds.toFixed(1)} s)`,
      ...(targeted ? atLeast(ratio, 0.8) : { target: "" }),
    });
  }
}

async function main() {
  const benchDatabase = await createBenchDatabase("sf_bench_export");
  const url = benchDatabase.url;
  const resultDir = await mkdtemp(path.join(tmpdir(), "sf-bench-export-"));
  const prefix = `sf-bench-${randomBytes(4).toString("hex")}`;
  const db = createDb(url, { max: 4 });
  const meterDb = createDb(url, { max: 1, applicationName: "export-bench-cpu" });
  const apiDb = createDb(url, { max: 10 });
  const redis = createRedisConnection(redisUrl, "producer");
  const queue = new Queue(TASKS_QUEUE, { connection: createRedisConnection(redisUrl, "producer"), prefix });
  let server: ReturnType<typeof serve> | undefined;
  let workers: WorkerProcess[] = [];
  let completion: TaskCompletionWatch | undefined;
  try {
    await runMigrations(url);
    completion = await watchTaskCompletion(db);
    const [server_] = await db.sql<{ version: string }[]>`select current_setting('server_version') as version`;
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
        `PostgreSQL ${server_?.version ?? "?"}, Node ${process.version}, workers ${processKind()}; load average ${load()}`,
    );
    const config = loadConfig({
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: "silent",
      RESULT_DIR: resultDir,
    });
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
    const baseUrl = `http://127.0.0.1:${port}`;
    const token = await mintManagementToken({
      now: Date.now(),
      subject: "bench",
      isAdmin: false,
      secret: config.MANAGEMENT_JWT_SECRET,
      ttlSeconds: TOKEN_TTL_SECONDS,
    });

    const warmUp = await seedExportStudy(db, "export-warm-up", WARM_UP_RESPONSES);
    await grantPermission(db.db, "bench", warmUp.studyKey, "get-responses");
    const peaksBySize: { size: number; peakKb: number }[] = [];
    for (const size of SIZES) {
      const studyKey = `export-${size}`;
      const seedStarted = performance.now();
      process.stdout.write(`seeding ${fmt(size)} responses…`);
      const study = await seedExportStudy(db, studyKey, size, (seeded) =>
        process.stdout.write(`\rseeding ${fmt(size)} responses… ${fmt(seeded)}`),
      );
      const [stats] = await db.sql<{ average: number }[]>`
        select avg(octet_length(responses::text) + octet_length(context::text))::float8 as average
        from survey_responses tablesample system (5) where study_key = ${studyKey}`;
      console.log(`\rseeded ${fmt(size)} responses in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
      await grantPermission(db.db, "bench", studyKey, "get-responses");

      // Fresh workers per size, so each size's peak is that of processes that saw only it.
      await stopWorkerProcesses(workers);
      let idleKb: number[] = [];
      if (!STAGES_ONLY) {
        workers = await startWorkerProcesses({
          count: WORKERS,
          databaseUrl: url,
          redisUrl,
          queuePrefix: prefix,
          env: { RESULT_DIR: resultDir },
          cpuProfileDir: process.env.BENCH_WORKER_PROFILE,
        });
        idleKb = await Promise.all(workers.map((worker) => worker.rssKb()));
        // A first export pays for loading and compiling the export code; a small study's takes it.
        for (const format of SELECTED_FORMATS)
          await exportThroughApi(baseUrl, token, meterDb, warmUp, format, workers, completion);
      }
      // The floor twice, the better kept: the first pass may still read the table from disk. Past
      // half a million rows once: the table was just written and is in memory, and a pass takes minutes.
      const floors = [await copyBaseline(url, meterDb, study)];
      if (size < 500_000) floors.push(await copyBaseline(url, meterDb, study));
      const floor = floors.reduce((best, next) => (next.seconds < best.seconds ? next : best));
      const rows: Figures[] = [];
      const stages: StageFigures[] = [];
      for (const format of SELECTED_FORMATS) {
        if (!STAGES_ONLY)
          rows.push(await exportThroughApi(baseUrl, token, meterDb, study, format, workers, completion));
        if (STAGES)
          stages.push(await measureExportStages(db, studyKey, study.surveyKey, format, resultDir, STAGE_BATCH));
      }
      printTable(study, stats?.average ?? 0, floor, rows, idleKb);
      printStages(stages, floor);
      const peakKb = Math.max(0, ...rows.flatMap((figures) => figures.workerPeakKb ?? []));
      peaksBySize.push({ size, peakKb });
    }
    if (peaksBySize.length > 1 && SELECTED_FORMATS.length > 0) {
      const [first] = peaksBySize;
      const last = peaksBySize.at(-1)!;
      recordBenchFigure({
        bench: "export",
        figure: `worker peak RSS, ${fmt(first!.size)} → ${fmt(last.size)} responses`,
        target: "flat",
        result: `${(first!.peakKb / 1024).toFixed(0)} → ${(last.peakKb / 1024).toFixed(0)} MB (${(last.peakKb / first!.peakKb).toFixed(2)}×)`,
      });
      console.log("\nworker peak RSS by size (largest of any worker in any format):");
      for (const { size, peakKb } of peaksBySize) {
        console.log(
          `  ${fmt(size).padStart(10)} responses   ${(peakKb / 1024).toFixed(0).padStart(5)} MB   ${(peakKb / (first?.peakKb ?? peakKb)).toFixed(2)}×`,
        );
      }
    }
  } finally {
    await stopWorkerProcesses(workers);
    await completion?.close();
    server?.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await apiDb.close();
    await meterDb.close();
    await db.close();
    await rm(resultDir, { recursive: true, force: true });
    await benchDatabase.drop();
  }
}

await main();
process.exit(0);
