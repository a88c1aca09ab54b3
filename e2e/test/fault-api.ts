// An API process for the Redis fault tests: the API's own server (apps/api/src/server.ts, as the
// entry starts it: unhandled errors end the process), but with a name on each of its Redis
// connections (CLIENT SETNAME), so a test can cut exactly this process's connections with
// CLIENT KILL. Logs go to stderr.
import { pino } from "pino";
import { loadConfig } from "@studyflow/api/config";
import { startApiServer } from "@studyflow/api/server";
import { exitOnUnhandledErrors } from "@studyflow/config";

const config = loadConfig(process.env);
const logger = pino({ level: config.LOG_LEVEL, base: { service: "fault-api" } }, pino.destination(2));
exitOnUnhandledErrors(logger);
const api = startApiServer({
  config,
  logger,
  applicationName: process.env.DB_APPLICATION_NAME ?? "sf-fault-api",
  redisOptions: { connectionName: process.env.REDIS_CONNECTION_NAME ?? "sf-fault-api" },
});
process.on("SIGTERM", () => void api.shutdown("SIGTERM"));
