import { serve } from "@hono/node-server";
import { Queue } from "bullmq";
import { exitOnUnhandledErrors, loadConfigOrExit, startupStep } from "@studyflow/config";
import { createDb } from "@studyflow/db";
import { externalServiceCallerFromConfig } from "@studyflow/domain";
import { RUN_ACTIONS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createApp } from "./app";
import { loadConfig, processEnv } from "./config";
import { createLogger } from "./logger";

const config = loadConfigOrExit(() => loadConfig(processEnv()));
const logger = createLogger(config.LOG_LEVEL, config.NODE_ENV === "development");
exitOnUnhandledErrors(logger);
const database = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: "studyflow-api" });
const redis = createRedisConnection(config.REDIS_URL, "producer");
const runActionsQueue = new Queue(RUN_ACTIONS_QUEUE, {
  connection: createRedisConnection(config.REDIS_URL, "producer"),
  prefix: config.QUEUE_PREFIX,
});

const callExternalService = await startupStep(logger, "external services", () =>
  externalServiceCallerFromConfig(config),
);
const app = createApp({
  config,
  database,
  redis,
  runActionsQueue,
  logger,
  ...(callExternalService ? { callExternalService } : {}),
});
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  logger.info({ port: info.port }, "api listening");
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  const deadline = setTimeout(() => {
    logger.error("shutdown deadline passed, exiting");
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  // Stop accepting, let in-flight requests finish, and drop idle keep-alive sockets at once.
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ("closeIdleConnections" in server) server.closeIdleConnections();
  });
  await Promise.allSettled([runActionsQueue.close(), database.close(5)]);
  redis.disconnect();
  clearTimeout(deadline);
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
