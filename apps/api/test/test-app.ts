import { Queue } from "bullmq";
import { pino } from "pino";
import { createDb, type DbHandle } from "@studyflow/db";
import { ReadCache, externalServiceCallerFromConfig, listenForCacheChanges } from "@studyflow/domain";
import { RUN_ACTIONS_QUEUE, createRedisConnection } from "@studyflow/queue";
import {
  createTestDatabase,
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

/** The real app over a database of its own and a BullMQ prefix of its own. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const override = options.databaseThrough?.(database.url) ?? options.databaseOverride;
  const prefix = uniqueQueuePrefix();
  const config = loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: "silent",
    // As behind one reverse proxy: tests name the client with X-Forwarded-For.
    TRUST_PROXY: "1",
    ...options.env,
  });
  const redis = createRedisConnection(config.REDIS_URL, "producer");
  const queueConnection = createRedisConnection(config.REDIS_URL, "producer");
  const runActionsQueue = new Queue(RUN_ACTIONS_QUEUE, { connection: queueConnection, prefix });
  let now: number | undefined;
  // As the server entry does: EXTERNAL_SERVICES_FILE in `env` configures the rules' external services.
  const externalServices = await externalServiceCallerFromConfig(config);
  const readCache = new ReadCache();
  const cacheListener = listenForCacheChanges(database.url, readCache);
  const deps: AppDeps = {
    readCache,
    ...(externalServices ? { callExternalService: externalServices } : {}),
    config,
    database: override ?? database,
    redis,
    runActionsQueue,
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
      await runActionsQueue.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      queueConnection.disconnect();
      if (override) await override.close(1);
      await database.drop();
    },
  };
}

export { createDb };
