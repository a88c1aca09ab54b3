import { serve } from "@hono/node-server";
import { demoModeWarning, exitOnUnhandledErrors, loadConfigOrExit, startupStep } from "@studyflow/config";
import { externalServiceCallerFromConfig } from "@studyflow/domain/external";
import { systemClock } from "@studyflow/domain/foundation";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import { createDb } from "@studyflow/db";
import { createRedisConnection, logConnectionErrors } from "@studyflow/queue";
import { accountLifecycleSettingsOf, loadConfig, processEnv } from "./config";
import { dashboardCredentials } from "./dashboard";
import { createHealthApp } from "./health";
import { createLogger } from "./logger";
import { startWorkerRuntime } from "./runtime";

const config = loadConfigOrExit(() => loadConfig(processEnv()));
setCaseStudyGlobalSecret(config.CASE_STUDY_GLOBAL_SECRET);
const logger = createLogger(config.LOG_LEVEL, config.NODE_ENV === "development");
exitOnUnhandledErrors(logger);
const demoWarning = demoModeWarning(config);
if (demoWarning !== undefined) logger.warn(demoWarning);
const database = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: "studyflow-worker" });
const connection = logConnectionErrors(createRedisConnection(config.REDIS_URL, "worker"), logger, "worker");
const producerConnection = logConnectionErrors(createRedisConnection(config.REDIS_URL, "producer"), logger, "producer");

const callExternalService = await startupStep(logger, "external services", () =>
  externalServiceCallerFromConfig(config),
);
const runtime = startWorkerRuntime({
  ...(callExternalService ? { callExternalService } : {}),
  database,
  connection,
  producerConnection,
  prefix: config.QUEUE_PREFIX,
  concurrency: config.WORKER_CONCURRENCY,
  bulkWritesInDatabase: config.BULK_WRITES_IN_DATABASE === "on",
  resultDir: config.RESULT_DIR,
  logger,
  clock: systemClock,
  temporaryParticipantRetentionSeconds: config.TEMP_PARTICIPANT_RETENTION_SECONDS,
  fileStore: config.EXPORT_FILE_STORE,
  exportRetention: {
    taskExportDays: config.EXPORT_RETENTION_DAYS,
    dailyExportDays: config.DAILY_EXPORT_RETENTION_DAYS,
  },
  taskRetention: { days: config.TASK_RETENTION_DAYS, timerDays: config.TIMER_TASK_RETENTION_DAYS },
  timer: { defaultIntervalSeconds: config.TIMER_INTERVAL_SECONDS, scanEveryMs: config.TIMER_SCAN_INTERVAL_MS },
  accountLifecycle: { settings: accountLifecycleSettingsOf(config) },
  ...(config.SMTP_URL
    ? {
        mail: { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS },
      }
    : {}),
});
const dashboard = dashboardCredentials(config, logger);
const health = serve({
  fetch: createHealthApp({
    database,
    redis: producerConnection,
    isRunning: () => runtime.worker.isRunning(),
    metrics: runtime.metrics,
    ...(dashboard ? { dashboard: { queues: runtime.queues, credentials: dashboard } } : {}),
  }).fetch,
  port: config.HEALTH_PORT,
});
logger.info({ concurrency: config.WORKER_CONCURRENCY, healthPort: config.HEALTH_PORT }, "worker started");
if (!config.SMTP_URL) logger.info("e-mail delivery is off (SMTP_URL is not set): outbox messages stay pending");

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  const outcome = await runtime.close(config.SHUTDOWN_TIMEOUT_MS);
  if (outcome === "timed-out") logger.warn("running jobs did not stop in time; they resume on another worker");
  health.close();
  await database.close(5);
  connection.disconnect();
  producerConnection.disconnect();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGHUP", () => void shutdown("SIGHUP"));
