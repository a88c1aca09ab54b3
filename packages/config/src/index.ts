import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ConfigError } from "./parse-env";
import { DEV_MANAGEMENT_JWT_SECRET, DEV_MANAGEMENT_SECRETS_KEY, DEV_PARTICIPANT_JWT_SECRET } from "./published-secrets";

export * from "./parse-env";
export * from "./published-secrets";
export * from "./thread-pool";
export * from "./young-generation";

const isProduction = (env: Record<string, string | undefined>) => env.NODE_ENV === "production";

export const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

export const postgresUrl = z
  .string()
  .default("postgres://postgres@127.0.0.1:5432/postgres")
  .refine((value) => /^postgres(ql)?:\/\//.test(value), "must be a postgres:// URL");

export const redisUrl = z
  .string()
  .default("redis://127.0.0.1:6379")
  .refine((value) => /^rediss?:\/\//.test(value), "must be a redis:// or rediss:// URL");

/** Namespaces every BullMQ key, so several deployments (or test runs) can share one Redis. */
export const queuePrefix = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, "may contain letters, digits, '_', '.', '-' only")
  .default("studyflow");

export const secret = z.string().min(32, "must be at least 32 characters");

export const milliseconds = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Loads an app's config at start; a bad or missing variable ends the process with the message. */
export function loadConfigOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

/** NODE_ENV as every app reads it; production turns off the development defaults. */
export const nodeEnv = z.enum(["development", "production", "test"]).default("development");

/**
 * The signing keys and password-reset settings, one definition for the API that checks tokens
 * and the CLI that mints them for it.
 */
export const tokenSettings = {
  /** HS256 key of management tokens (researchers, operators). */
  MANAGEMENT_JWT_SECRET: secret,
  /** HS256 key of participant tokens; a different key from the management one. */
  PARTICIPANT_JWT_SECRET: secret,
  /** Lifetime of password-reset tokens. */
  RESET_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /** Link put into password-reset e-mails; the token is appended as ?token=…. */
  RESET_PASSWORD_URL: z.url().default("http://localhost:8080/reset-password"),
};

/**
 * Outside production the JWT keys and the key of sealed secrets default to the development ones
 * (see DEV_MANAGEMENT_JWT_SECRET, DEV_MANAGEMENT_SECRETS_KEY).
 */
export function withDevSecrets(env: Record<string, string | undefined>): Record<string, string | undefined> {
  if (isProduction(env)) return env;
  return {
    MANAGEMENT_JWT_SECRET: DEV_MANAGEMENT_JWT_SECRET,
    PARTICIPANT_JWT_SECRET: DEV_PARTICIPANT_JWT_SECRET,
    MANAGEMENT_SECRETS_KEY: DEV_MANAGEMENT_SECRETS_KEY,
    ...env,
  };
}

/** The study rules' external services, for every app that runs rules (the API and the worker). */
export const externalServiceSettings = {
  /** YAML or JSON file listing the services (name, url, apiKey, timeout, mTLSConfig); unset = none. */
  EXTERNAL_SERVICES_FILE: z.string().min(1).optional(),
  /** Sent to external services as `instanceID`, so a service shared by deployments can tell them apart. */
  INSTANCE_ID: z.string().min(1).max(100).default("studyflow"),
};

/**
 * Studies imported from CASE keep case-backend's id mapping, which mixes its instance's
 * STUDY_GLOBAL_SECRET into every participant id: every process that derives participant ids (the
 * API, the worker, the CLI) reads it, so a profile maps to the participant it had in CASE.
 */
export const caseStudySettings = {
  /** case-backend's STUDY_GLOBAL_SECRET, as it was; unset = no study with one of CASE's keyed id mappings can be used. */
  CASE_STUDY_GLOBAL_SECRET: z.string().min(1).optional(),
};

/**
 * A step of an app's start that reads configured files (e.g. the external services): a failure
 * is logged as one readable line and stops the process, rather than leaving it half-configured.
 */
export async function startupStep<T>(
  logger: { fatal: (details: object, message: string) => void },
  what: string,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    logger.fatal({ reason: error instanceof Error ? error.message : String(error) }, `cannot start: ${what}`);
    process.exit(1);
  }
}

/**
 * A path inside the repository (the nearest directory upwards from the working directory whose
 * package.json declares workspaces), so every app and script agrees on it whatever directory it
 * was started from: `npm run dev -w @studyflow/api` runs in apps/api, `npm start` at the root.
 * Outside a checkout (an image without the workspace file) it is taken from the working directory.
 */
export function repositoryPath(relative: string, from = process.cwd()): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { workspaces?: unknown };
      if (manifest.workspaces !== undefined) return path.join(dir, relative);
    } catch {
      // no package.json here: keep looking upwards
    }
    if (path.dirname(dir) === dir) return path.resolve(from, relative);
  }
}

/** Where task result files live: shared by the API (reads) and the worker (writes). */
export const resultDir = z
  .string()
  .min(1)
  .default(() => repositoryPath("var/results"))
  // a relative value is taken from the working directory, once, so logs show where files go
  .transform((value) => path.resolve(value));

/**
 * An error nothing handled (a throw in a timer, a rejected promise nobody awaited) leaves the
 * process in a state nobody knows: log it with its stack and exit non-zero at once, so the
 * supervisor (compose's restart policy, `npm start`) starts a clean process.
 */
export function exitOnUnhandledErrors(logger: { fatal: (details: object, message: string) => void }): void {
  const fail = (kind: string) => (error: unknown) => {
    logger.fatal({ err: error }, `${kind}: exiting so that a fresh process takes over`);
    process.exit(1);
  };
  process.on("uncaughtException", fail("uncaught exception"));
  process.on("unhandledRejection", fail("unhandled promise rejection"));
}

/** What a whole-number setting may be: its bounds and the value it takes when it is not set. */
export interface SettingBounds {
  min: number;
  max: number;
  fallback: number;
}

/**
 * The study timer's default interval, one definition for the worker that schedules the ticks and
 * the API and CLI that show a study's effective interval, so the three agree. The bounds are the
 * domain's (a study's own interval has the same ones): packages/domain passes them in.
 */
export const timerSettings = (interval: SettingBounds) => ({
  /**
   * Seconds between the ticks of a study that sets no interval of its own: each active study
   * whose rules handle TIMER gets a tick (the TIMER event over its participants) this often.
   */
  TIMER_INTERVAL_SECONDS: z.coerce.number().int().min(interval.min).max(interval.max).default(interval.fallback),
});

/**
 * Days a finished task is kept; "0" or "off" keeps finished tasks forever. Whole days from 0 to
 * `maxDays`.
 */
const retentionDays = (fallback: number, maxDays: number) => {
  const rule = `must be a whole number of days from 0 to ${maxDays}, or "off"`;
  return z.preprocess(
    (raw) => (typeof raw === "string" && raw.trim().toLowerCase() === "off" ? 0 : raw),
    z.coerce.number({ error: rule }).int(rule).min(0, rule).max(maxDays, rule).default(fallback),
  );
};

/**
 * Retention of finished tasks (completed, failed, canceled, skipped) with their result documents
 * and files: the workers remove them, the API and CLI show a study's effective retention. A study
 * may set its own (its task-retention setting). The defaults and bounds are the domain's.
 */
export const taskRetentionSettings = (defaults: { days: number; timerDays: number; maxDays: number }) => ({
  /** Days finished run-actions and export tasks are kept; 0 or "off": forever. */
  TASK_RETENTION_DAYS: retentionDays(defaults.days, defaults.maxDays),
  /**
   * Days finished timer ticks are kept (one per study and interval: 24 a day when hourly); 0 or
   * "off": forever. Shorter than other tasks': a tick is housekeeping nobody asked for by hand.
   */
  TIMER_TASK_RETENTION_DAYS: retentionDays(defaults.timerDays, defaults.maxDays),
});

/** Whole seconds from an hour to ten years: the account lifecycle's times. */
const lifecycleSeconds = z.coerce
  .number()
  .int()
  .min(3_600)
  .max(10 * 366 * 86_400);

/**
 * The account lifecycle of case-backend's user-management job: the workers run it, the CLI's
 * accounts:lifecycle shows what its next round does, so both read the same settings. Each step is
 * off until its time is set: deleting accounts is nothing to start by default. case-backend's
 * example configuration uses 168 h, 48 h, 8760 h and 336 h.
 */
export const accountLifecycleSettings = {
  /** Accounts whose address is still unproven this long after sign-up are deleted (the deletion task, no mail). */
  ACCOUNT_UNVERIFIED_DELETE_AFTER_SECONDS: lifecycleSeconds.optional(),
  /** Accounts whose address is still unproven this long after sign-up get one reminder with a new link. */
  ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS: lifecycleSeconds.optional(),
  /** Accounts with no sign-in, session renewal or proof this long get the inactivity notice. */
  ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS: lifecycleSeconds.optional(),
  /**
   * How long after the notice an account that stayed inactive is deleted: the time its owner has to
   * sign in. case-backend's example: 14 days.
   */
  ACCOUNT_INACTIVE_DELETE_AFTER_NOTICE_SECONDS: lifecycleSeconds.default(14 * 86_400),
};
