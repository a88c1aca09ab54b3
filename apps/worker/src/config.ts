import { z } from "zod";
import { logLevel, milliseconds, parseEnv, port, postgresUrl, queuePrefix, redisUrl } from "@studyflow/config";

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** PostgreSQL connection string. */
  DATABASE_URL: postgresUrl,
  /** Connections in the worker's pool: one per concurrently running chunk, plus one spare. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(4),
  /** Redis holding the BullMQ queues. */
  REDIS_URL: redisUrl,
  /** Key prefix of every BullMQ key; api and worker must agree. */
  QUEUE_PREFIX: queuePrefix,
  /** Jobs one process runs at once. Around the core count: the work is database-bound. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Port of the worker's health endpoint. */
  HEALTH_PORT: port(8081),
  /** Directory of task result files, shared with the api (a volume in compose). */
  RESULT_DIR: z.string().min(1).default("./var/results"),
  /** Time given to running jobs at shutdown before the process exits (they resume elsewhere). */
  SHUTDOWN_TIMEOUT_MS: milliseconds(20_000),
  LOG_LEVEL: logLevel,
});

export type WorkerConfig = z.output<typeof schema>;

export function loadConfig(env: Record<string, string | undefined>): WorkerConfig {
  return parseEnv(schema, env);
}
