import { Queue } from "bullmq";
import { pino } from "pino";
import { ConfigError } from "@studyflow/config";
import { createDb, type DbHandle } from "@studyflow/db";
import { ReadCache, listenForCacheChanges } from "@studyflow/domain/cache";
import { externalServiceCallerFromConfig } from "@studyflow/domain/external";
import { systemClock } from "@studyflow/domain/foundation";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import {
  createTestDatabase,
  createTestRedis,
  deletePrefix,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import { createApp } from "../src/app";
import { loadConfig, type ApiConfig } from "../src/config";
import type { AppDeps } from "../src/deps";

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  database: TestDatabase;
  config: ApiConfig;
  /** The app's read cache (every test app keeps one, as the server does). */
  readCache: ReadCache;
  /**
   * Waits until the cache has heard of every change committed so far: for tests that change
   * cached rows (studies, permissions, users, …) directly rather than through the domain.
   */
  settle: () => Promise<void>;
  /** Moves the app's clock. */
  setNow: (ms: number) => void;
  close: () => Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Use another database handle than the test database (e.g. an unreachable one). */
  databaseOverride?: DbHandle;
  /** Reach the test database through a handle of the test's making (e.g. through a proxy), given its URL. */
  databaseThrough?: (databaseUrl: string) => DbHandle;
}

export interface TestBackend {
  database: TestDatabase;
  /** The BullMQ prefix of its own. */
  prefix: string;
  /** The settings that point an API at both: NODE_ENV test, DATABASE_URL, REDIS_URL, QUEUE_PREFIX. */
  env: Record<string, string>;
  /** Removes the prefix's keys and the database. */
  drop: () => Promise<void>;
}

/** A database and a BullMQ prefix of a test's own, for an API the test builds or starts itself. */
export async function createTestBackend(): Promise<TestBackend> {
  const database = await createTestDatabase();
  const prefix = uniqueQueuePrefix();
  return {
    database,
    prefix,
    env: { NODE_ENV: "test", DATABASE_URL: database.url, REDIS_URL: testRedisUrl, QUEUE_PREFIX: prefix },
    drop: async () => {
      const redis = createTestRedis();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await database.drop();
    },
  };
}

/** The message `loadConfig` refuses `env` with, or "" when it takes it. */
export function configErrorOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return "";
}

/** The real app over a database of its own and a BullMQ prefix of its own. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { database, prefix, env } = await createTestBackend();
  const override = options.databaseThrough?.(database.url) ?? options.databaseOverride;
  const config = loadConfig({
    ...env,
    LOG_LEVEL: "silent",
    // As behind one reverse proxy: tests name the client with X-Forwarded-For.
    TRUST_PROXY: "1",
    ...options.env,
  });
  const redis = createRedisConnection(config.REDIS_URL, "producer");
  const queueConnection = createRedisConnection(config.REDIS_URL, "producer");
  const taskQueue = new Queue(TASKS_QUEUE, { connection: queueConnection, prefix });
  let now: number | undefined;
  // As the server entry does: EXTERNAL_SERVICES_FILE in `env` configures the rules' external services.
  const externalServices = await externalServiceCallerFromConfig(config);
  const readCache = new ReadCache({ clock: systemClock });
  const cacheListener = listenForCacheChanges(database.url, readCache);
  const deps: AppDeps = {
    readCache,
    ...(externalServices ? { callExternalService: externalServices } : {}),
    config,
    database: override ?? database,
    redis,
    taskQueue,
    logger: pino({ level: "silent" }),
    clock: () => now ?? Date.now(),
  };
  const app = createApp(deps);
  return {
    app,
    deps,
    database,
    config,
    readCache,
    settle: () => readCache.settle(database.sql),
    setNow: (ms) => {
      now = ms;
    },
    close: async () => {
      externalServices?.close();
      await cacheListener.stop();
      await taskQueue.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      queueConnection.disconnect();
      if (override) await override.close(1);
      await database.drop();
    },
  };
}

export { createDb };
