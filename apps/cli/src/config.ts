import { z } from "zod";
import {
  accountLifecycleSettings,
  caseStudySettings,
  ConfigError,
  demoSettings,
  parseEnv,
  postgresUrl,
  nodeEnv,
  productionSecretIssues,
  queuePrefix,
  redisUrl,
  resultDir,
  taskRetentionSettings,
  timerSettings,
  tokenSettings,
  withDevSecrets,
} from "@studyflow/config";
import { TASK_RETENTION_DEFAULTS } from "@studyflow/domain/tasks";
import { TIMER_INTERVAL_BOUNDS } from "@studyflow/domain/timer";

/**
 * The part of the API's environment the CLI and the demo seed use, with the API's defaults: the
 * CLI writes the same database and signs with the same keys, so what it creates the API accepts.
 */
const schema = z.object({
  NODE_ENV: nodeEnv,
  /**
   * The compose demo (docker-compose.demo.yml): published secrets accepted in production
   * (packages/config), and demo:seed allowed to write its public demo data there.
   */
  ...demoSettings,
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
  /** The workers' result directory: export files with EXPORT_FILE_STORE=filesystem, and tasks' result documents. */
  RESULT_DIR: resultDir,
  /** The study timer's default interval, as the workers schedule it: timer:show shows it. */
  ...timerSettings(TIMER_INTERVAL_BOUNDS),
  /** Task retention as the workers apply it: study:task-retention shows it, tasks:prune applies it. */
  ...taskRetentionSettings(TASK_RETENTION_DEFAULTS),
  /** The account lifecycle times as the workers apply them: accounts:lifecycle --dry-run lists what they would do. */
  ...accountLifecycleSettings,
  /** case-backend's global secret: the CLI derives participant ids too (demo seed, participant commands). */
  ...caseStudySettings,
});

export type CliConfig = z.output<typeof schema>;

/** The variables the CLI reads, with their defaults: e2e/test/compose-check.test.ts holds docker-compose.yml to them. */
export const configSchema = schema;

export function loadConfig(env: Record<string, string | undefined>): CliConfig {
  const config = parseEnv(schema, withDevSecrets(env));
  // Tokens minted with a published key would be forgeable by anyone: refused in production.
  const issues = productionSecretIssues(config);
  if (issues.length > 0) throw new ConfigError(issues);
  return config;
}

/** The process environment: read here and nowhere else. */
export const processEnv = (): Record<string, string | undefined> => process.env;
