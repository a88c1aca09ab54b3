import { serve, type ServerType } from "@hono/node-server";
import { Queue } from "bullmq";
import type { RedisOptions } from "ioredis";
import { createDb } from "@studyflow/db";
import { ReadCache, listenForCacheChanges } from "@studyflow/domain/cache";
import { systemClock } from "@studyflow/domain/foundation";
import { type ExternalServiceCaller } from "@studyflow/domain/rules";
import { TASKS_QUEUE, createRedisConnection, logConnectionErrors } from "@studyflow/queue";
import { createApp } from "./app";
import { startSignInMtlsServer, type SignInMtlsServer } from "./auth/signin-mtls-server";
import type { ApiConfig } from "./config";
import { closeServer } from "./listening-server";
import type { Logger } from "./logger";
import { createApiMetrics, metricsExposure, startMetricsServer, type MetricsServer } from "./metrics";

export interface ApiServerOptions {
  config: ApiConfig;
  logger: Logger;
  callExternalService?: ExternalServiceCaller;
  /** PostgreSQL application_name of the pool: how an operator finds its backends. */
  applicationName?: string;
  /** More ioredis options for both Redis connections (e.g. a connection name). */
  redisOptions?: RedisOptions;
}

export interface ApiServer {
  server: ServerType;
  /** The admin port's server when METRICS_PORT is set, once it listens. */
  metricsServer: Promise<MetricsServer> | undefined;
  /** case-admin's mutual-TLS sign-in listener when MANAGEMENT_IDP_SIGNIN_MTLS_PORT is set, once it listens. */
  signInServer: Promise<SignInMtlsServer> | undefined;
  /** Stops accepting, lets in-flight requests finish, closes the metrics and sign-in ports and the pools. */
  close(): Promise<void>;
  /** close(), bounded by SHUTDOWN_TIMEOUT_MS, then exits the process. */
  shutdown(signal: string): Promise<void>;
}

/** The API process: its pools, its Redis connections, the HTTP server, and a graceful shutdown. */
export function startApiServer(options: ApiServerOptions): ApiServer {
  const { config, logger } = options;
  const database = createDb(config.DATABASE_URL, {
    max: config.DATABASE_POOL_SIZE,
    applicationName: options.applicationName ?? "studyflow-api",
  });
  const redisConnection = (role: string) =>
    logConnectionErrors(createRedisConnection(config.REDIS_URL, "producer", options.redisOptions), logger, role);
  const redis = redisConnection("rate limits and task streams");
  const queueConnection = redisConnection("job queue");
  const taskQueue = new Queue(TASKS_QUEUE, { connection: queueConnection, prefix: config.QUEUE_PREFIX });
  taskQueue.on("error", (error) => logger.warn({ err: error }, "job queue error"));

  const clock = systemClock;
  const readCache = new ReadCache({ clock });
  const cacheListener = listenForCacheChanges(config.DATABASE_URL, readCache, (error) =>
    logger.warn({ err: error }, "cache announcements: cannot listen; the cache keeps nothing until it can"),
  );
  const metrics = createApiMetrics();
  const app = createApp(
    {
      config,
      database,
      readCache,
      redis,
      taskQueue,
      logger,
      clock,
      ...(options.callExternalService ? { callExternalService: options.callExternalService } : {}),
    },
    metrics,
  );
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    logger.info({ port: info.port }, "api listening");
  });
  const exposure = metricsExposure(config);
  let metricsServer: Promise<MetricsServer> | undefined;
  if (exposure.on === "admin-port") {
    metricsServer = startMetricsServer(metrics, exposure).then(
      (started) => {
        logger.info({ port: started.port, token: exposure.token !== undefined }, "metrics listening");
        return started;
      },
      (error: unknown) => {
        // A metrics port that cannot be bound (in use, not permitted) is a deployment mistake.
        logger.fatal({ err: error, port: exposure.port }, "cannot start: metrics port (METRICS_PORT)");
        process.exit(1);
      },
    );
  } else if (exposure.on === "nowhere") {
    logger.warn("metrics are served nowhere: set METRICS_PORT (an admin port) or METRICS_TOKEN to scrape them");
  }

  let signInServer: Promise<SignInMtlsServer> | undefined;
  if (config.MANAGEMENT_IDP_SIGNIN_MTLS_PORT !== undefined) {
    signInServer = startSignInMtlsServer(app.fetch, config).then(
      (started) => {
        logger.info({ port: started.port }, "mTLS sign-in listening");
        started.server.on("tlsClientError", (error: Error) =>
          logger.debug({ err: error }, "mTLS sign-in: handshake refused"),
        );
        return started;
      },
      (error: unknown) => {
        // Unreadable or malformed PEM files, or a port that cannot be bound, are deployment mistakes.
        logger.fatal(
          { reason: error instanceof Error ? error.message : String(error) },
          "cannot start: mTLS sign-in listener (MANAGEMENT_IDP_SIGNIN_MTLS_*)",
        );
        process.exit(1);
      },
    );
  }

  async function close() {
    await Promise.all([
      closeServer(server),
      metricsServer?.then((started) => started.close()),
      signInServer?.then((started) => started.close()),
    ]);
    await Promise.allSettled([taskQueue.close(), database.close(5), cacheListener.stop()]);
    redis.disconnect();
    queueConnection.disconnect();
  }

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
    await close();
    clearTimeout(deadline);
    process.exit(0);
  }
  return { server, metricsServer, signInServer, close, shutdown };
}
