import { Queue } from "bullmq";
import { pino } from "pino";
import { createDb, type DbHandle } from "@studyflow/db";
import { externalServiceCallerFromConfig } from "@studyflow/domain";
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
  /** Moves the app's clock. */
  setNow: (ms: number) => void;
  close: () => Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Use another database handle than the test database (e.g. an unreachable one). */
  databaseOverride?: DbHandle;
}

/** The real app over a database of its own and a BullMQ prefix of its own. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
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
  const deps: AppDeps = {
    ...(externalServices ? { callExternalService: externalServices } : {}),
    config,
    database: options.databaseOverride ?? database,
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
    setNow: (ms) => {
      now = ms;
    },
    close: async () => {
      externalServices?.close();
      await runActionsQueue.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      queueConnection.disconnect();
      if (options.databaseOverride) await options.databaseOverride.close(1);
      await database.drop();
    },
  };
}

export { createDb };
