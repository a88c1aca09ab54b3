import { z } from "zod";
import {
  accountLifecycleSettings,
  ConfigError,
  demoSettings,
  externalServiceSettings,
  caseStudySettings,
  resultDir,
  logLevel,
  milliseconds,
  parseEnv,
  port,
  postgresUrl,
  productionSecretIssues,
  queuePrefix,
  redisUrl,
  taskRetentionSettings,
  timerSettings,
} from "@studyflow/config";
import { type AccountLifecycleSettings } from "@studyflow/domain/participant-accounts";
import { TASK_RETENTION_DEFAULTS } from "@studyflow/domain/tasks";
import { TIMER_INTERVAL_BOUNDS } from "@studyflow/domain/timer";
import { TIMER_SCAN_EVERY_MS } from "./schedules/cluster-schedules";

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** Published secrets accepted in production, for the compose demo only (packages/config). */
  ...demoSettings,
  /** PostgreSQL connection string. */
  DATABASE_URL: postgresUrl,
  /** Connections in the worker's pool: one per concurrently running chunk, plus one spare. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(4),
  /** Redis holding the BullMQ queues. */
  REDIS_URL: redisUrl,
  /** Key prefix of every BullMQ key; api and worker must agree. */
  QUEUE_PREFIX: queuePrefix,
  /** Jobs one process runs at once. Around the core count: the work is database-bound. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Port of the worker's health endpoint. */
  HEALTH_PORT: port(8081),
  /** Directory of task result files, shared with the api (a volume in compose). */
  RESULT_DIR: resultDir,
  /** Time given to running jobs at shutdown before the process exits (they resume elsewhere). */
  SHUTDOWN_TIMEOUT_MS: milliseconds(20_000),
  /** SMTP server the outbox is delivered through, e.g. smtp://mailpit:1025; unset = no delivery. */
  SMTP_URL: z
    .string()
    .refine((value) => /^smtps?:\/\//.test(value), "must be an smtp:// or smtps:// URL")
    .optional(),
  /** Sender of every e-mail. */
  MAIL_FROM: z.string().min(3).default("studyflow <no-reply@studyflow.local>"),
  /** How often the outbox is checked for messages that are due. */
  OUTBOX_POLL_INTERVAL_MS: milliseconds(2_000),
  /** Basic-auth user and password of the queue dashboard on the health port; both unset = no dashboard. */
  DASHBOARD_USER: z.string().min(1).optional(),
  DASHBOARD_PASSWORD: z.string().min(12, "must be at least 12 characters").optional(),
  /**
   * Temporary participants older than this are removed (with their confidential responses); it
   * must exceed the API's TEMP_PARTICIPANT_MAX_AGE_SECONDS, after which they can no longer be merged.
   */
  TEMP_PARTICIPANT_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(86_400)
    .default(7 * 86_400),
  /** The study timer's default interval (packages/config, shared with the API and the CLI). */
  ...timerSettings(TIMER_INTERVAL_BOUNDS),
  /** Retention of finished tasks and their files (packages/config, shared with the API and the CLI). */
  ...taskRetentionSettings(TASK_RETENTION_DEFAULTS),
  /**
   * Whether bulk batches of rule sets that only write flags, the study status and assigned surveys run in the
   * database as one statement each (see the engine README, "Bulk writes in SQL"); "off" runs every
   * batch in the engine. The results are the same; the switch is there to compare or to rule the
   * database path out.
   */
  BULK_WRITES_IN_DATABASE: z.enum(["on", "off"]).default("on"),
  /** How often the timer looks for due ticks: a tick starts at most this late. Tests shorten it. */
  TIMER_SCAN_INTERVAL_MS: milliseconds(TIMER_SCAN_EVERY_MS),
  /**
   * Where export files are kept: "postgres" (default; every process already reaches it, and a
   * batch's part commits with its checkpoint) or "filesystem" (parts under RESULT_DIR/files, which
   * must then be a volume every api and worker process mounts).
   */
  EXPORT_FILE_STORE: z.enum(["postgres", "filesystem"]).default("postgres"),
  /** Days an export task's file is kept before retention removes it (a download then says it expired). */
  EXPORT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
  /** Days a daily export's file is kept: longer than a task's, as nobody asked for it by hand. */
  DAILY_EXPORT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(90),
  /**
   * The account lifecycle rounds (packages/config, shared with the CLI's accounts:lifecycle): each
   * off until its time is set.
   */
  ...accountLifecycleSettings,
  /**
   * The participant app's address-verification page, as the API's VERIFY_EMAIL_URL: the reminder
   * to confirm an address carries a new link to it. Set the same value as the API's.
   */
  VERIFY_EMAIL_URL: z.url().default("http://localhost:3000/link/verify-contact"),
  /** Lifetime of the reminder's link, as the API's VERIFY_EMAIL_TOKEN_TTL_SECONDS for the sign-up link. */
  VERIFY_EMAIL_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .default(7 * 86_400),
  ...externalServiceSettings,
  ...caseStudySettings,
  LOG_LEVEL: logLevel,
});

export type WorkerConfig = z.output<typeof schema>;

/** The variables the worker reads, with their defaults: e2e/test/compose-check.test.ts holds docker-compose.yml to them. */
export const configSchema = schema;

export function loadConfig(env: Record<string, string | undefined>): WorkerConfig {
  const config = parseEnv(schema, env);
  // A published dashboard password (or database password) lets anyone in: refused in production.
  const issues = productionSecretIssues(config);
  if (issues.length > 0) throw new ConfigError(issues);
  return config;
}

/** The account lifecycle rounds' settings, as the domain takes them. */
export function accountLifecycleSettingsOf(config: WorkerConfig): AccountLifecycleSettings {
  return {
    unverifiedDeleteAfterSeconds: config.ACCOUNT_UNVERIFIED_DELETE_AFTER_SECONDS,
    unverifiedReminderAfterSeconds: config.ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS,
    inactiveNotifyAfterSeconds: config.ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS,
    inactiveDeleteAfterNoticeSeconds: config.ACCOUNT_INACTIVE_DELETE_AFTER_NOTICE_SECONDS,
    verifyEmail: { url: config.VERIFY_EMAIL_URL, ttlSeconds: config.VERIFY_EMAIL_TOKEN_TTL_SECONDS },
  };
}

/** The process environment: read here and nowhere else. */
export const processEnv = (): Record<string, string | undefined> => process.env;
