// A worker process for the crash tests: the real runtime, with small batches so a task takes
// long enough to be killed in the middle, and short locks so a successor takes over quickly.
import { pino } from "pino";
import { createDb } from "@studyflow/db";
import { createRedisConnection } from "@studyflow/queue";
import { startWorkerRuntime } from "../src/runtime";
import { systemClock } from "@studyflow/domain/foundation";

const env = process.env;
const database = createDb(env.DATABASE_URL ?? "", { max: 3 });
startWorkerRuntime({
  clock: systemClock,
  database,
  connection: createRedisConnection(env.REDIS_URL ?? "", "worker"),
  producerConnection: createRedisConnection(env.REDIS_URL ?? "", "producer"),
  prefix: env.QUEUE_PREFIX ?? "",
  concurrency: 1,
  resultDir: env.RESULT_DIR ?? "",
  logger: pino({ level: "silent" }),
  batchSize: Number(env.BATCH_SIZE ?? 25),
  chunkSize: Number(env.CHUNK_SIZE ?? 1_000_000),
  // short by default so a successor takes over quickly; the recovery measurement sets the real ones
  lockDurationMs: Number(env.LOCK_DURATION_MS ?? 2_000),
  stalledIntervalMs: Number(env.STALLED_INTERVAL_MS ?? 1_000),
  maintenance: false,
  bulkWritesInDatabase: env.BULK_WRITES_IN_DATABASE !== "off",
});
process.stdout.write("ready\n");
