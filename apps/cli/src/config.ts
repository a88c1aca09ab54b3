import { z } from "zod";
import {
  parseEnv,
  postgresUrl,
  nodeEnv,
  queuePrefix,
  redisUrl,
  resultDir,
  tokenSettings,
  withDevSecrets,
} from "@studyflow/config";

/**
 * The part of the API's environment the CLI and the demo seed use, with the API's defaults: the
 * CLI writes the same database and signs with the same keys, so what it creates the API accepts.
 */
const schema = z.object({
  NODE_ENV: nodeEnv,
  /** PostgreSQL connection string. */
  DATABASE_URL: postgresUrl,
  ...tokenSettings,
  /** Redis of the job queue: the export commands queue their task there for the workers. */
  REDIS_URL: redisUrl,
  /** Key prefix of every BullMQ key; the same as the API's and the workers'. */
  QUEUE_PREFIX: queuePrefix,
  /**
   * Where the workers keep export files, as they are configured: "postgres" (default) or
   * "filesystem" (under RESULT_DIR, a volume this process must then mount too).
   */
  EXPORT_FILE_STORE: z.enum(["postgres", "filesystem"]).default("postgres"),
  /** The workers' result directory; read only with EXPORT_FILE_STORE=filesystem. */
  RESULT_DIR: resultDir,
});

export type CliConfig = z.output<typeof schema>;

/** The variables the CLI reads, with their defaults: e2e/test/compose-check.test.ts holds docker-compose.yml to them. */
export const configSchema = schema;

export function loadConfig(env: Record<string, string | undefined>): CliConfig {
  return parseEnv(schema, withDevSecrets(env));
}

/** The process environment: read here and nowhere else. */
export const processEnv = (): Record<string, string | undefined> => process.env;
