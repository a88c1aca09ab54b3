// A worker process for the fault tests: the real runtime as apps/worker/src/index.ts starts it
// (unhandled errors end the process), with names on its PostgreSQL pool and Redis connections
// so a test can cut exactly this process's connections, small batches and chunks so a task runs
// long enough to be disturbed, and short locks so a successor takes a stalled job over quickly.
//
// FAULT_KILL_BEFORE_RESULT_FILE=1 makes it SIGKILL itself when it is about to write a task's
// result file (the finalisation step, packages/domain/src/bulk/finalize-task.ts): the hook wraps
// `writeFile` of node:fs/promises here, before the runtime is imported; no product code knows.
//
// TIMER_SCAN_INTERVAL_MS runs the study timer's scans that often (TIMER_INTERVAL_SECONDS the
// default interval, 3600 unless set); without it the process runs no scans.
import fsPromises from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { pino } from "pino";

const env = process.env;
const resultDir = path.resolve(env.RESULT_DIR ?? "");

if (env.FAULT_KILL_BEFORE_RESULT_FILE === "1") {
  const writeFile = fsPromises.writeFile;
  fsPromises.writeFile = ((file: Parameters<typeof writeFile>[0], ...rest: unknown[]) => {
    if (typeof file === "string" && path.resolve(file).startsWith(`${resultDir}${path.sep}`)) {
      process.stdout.write(`finalizing ${path.relative(resultDir, file)}\n`);
      process.kill(process.pid, "SIGKILL");
    }
    return (writeFile as (...args: unknown[]) => Promise<void>)(file, ...rest);
  }) as typeof writeFile;
  // ES modules importing { writeFile } from node:fs/promises see the wrapper from now on.
  syncBuiltinESMExports();
}

const { exitOnUnhandledErrors } = await import("@studyflow/config");
const { createDb } = await import("@studyflow/db");
const { systemClock } = await import("@studyflow/domain/foundation");
const { createRedisConnection } = await import("@studyflow/queue");
const { startWorkerRuntime } = await import("@studyflow/worker/runtime");

const logger = pino({ level: env.LOG_LEVEL ?? "warn", base: { service: "fault-worker" } }, pino.destination(2));
exitOnUnhandledErrors(logger);
const redisName = env.REDIS_CONNECTION_NAME ? { connectionName: env.REDIS_CONNECTION_NAME } : {};
const database = createDb(env.DATABASE_URL ?? "", {
  max: 4,
  applicationName: env.DB_APPLICATION_NAME ?? "sf-fault-worker",
});
const connection = createRedisConnection(env.REDIS_URL ?? "", "worker", redisName);
const producerConnection = createRedisConnection(env.REDIS_URL ?? "", "producer", redisName);
const runtime = startWorkerRuntime({
  clock: systemClock,
  database,
  connection,
  producerConnection,
  prefix: env.QUEUE_PREFIX ?? "",
  concurrency: Number(env.CONCURRENCY ?? 2),
  resultDir,
  logger,
  batchSize: Number(env.BATCH_SIZE ?? 50),
  chunkSize: Number(env.CHUNK_SIZE ?? 1_000),
  lockDurationMs: 2_000,
  stalledIntervalMs: 1_000,
  maintenance: false,
  ...(env.TIMER_SCAN_INTERVAL_MS
    ? {
        timer: {
          defaultIntervalSeconds: Number(env.TIMER_INTERVAL_SECONDS ?? 3_600),
          scanEveryMs: Number(env.TIMER_SCAN_INTERVAL_MS),
        },
      }
    : {}),
});

process.on("SIGTERM", () => {
  void (async () => {
    await runtime.close(5_000);
    await database.close(1);
    connection.disconnect();
    producerConnection.disconnect();
    process.exit(0);
  })();
});
await runtime.worker.waitUntilReady();
process.stdout.write("ready\n");
