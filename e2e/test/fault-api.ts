// An API process for the Redis fault tests: the app built as apps/api/src/index.ts builds it
// (unhandled errors end the process, the real HTTP server), but with a name on each of its Redis
// connections (CLIENT SETNAME), so a test can cut exactly this process's connections with
// CLIENT KILL. Prints `listening <port>` once it accepts requests.
import { serve } from "@hono/node-server";
import { Queue } from "bullmq";
import { pino } from "pino";
import { createApp } from "@studyflow/api";
import { loadConfig } from "@studyflow/api/config";
import { exitOnUnhandledErrors } from "@studyflow/config";
import { createDb } from "@studyflow/db";
import { RUN_ACTIONS_QUEUE, createRedisConnection } from "@studyflow/queue";

const config = loadConfig(process.env);
const logger = pino({ level: config.LOG_LEVEL, base: { service: "fault-api" } }, pino.destination(2));
exitOnUnhandledErrors(logger);
const named = { connectionName: process.env.REDIS_CONNECTION_NAME ?? "sf-fault-api" };
const database = createDb(config.DATABASE_URL, {
  max: config.DATABASE_POOL_SIZE,
  applicationName: process.env.DB_APPLICATION_NAME ?? "sf-fault-api",
});
const redis = createRedisConnection(config.REDIS_URL, "producer", named);
const queueConnection = createRedisConnection(config.REDIS_URL, "producer", named);
const runActionsQueue = new Queue(RUN_ACTIONS_QUEUE, { connection: queueConnection, prefix: config.QUEUE_PREFIX });
const app = createApp({ config, database, redis, runActionsQueue, logger });
serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});
process.on("SIGTERM", () => {
  void (async () => {
    await Promise.allSettled([runActionsQueue.close(), database.close(1)]);
    redis.disconnect();
    queueConnection.disconnect();
    process.exit(0);
  })();
});
