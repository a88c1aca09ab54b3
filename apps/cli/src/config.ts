import { z } from "zod";
import {
  DEV_MANAGEMENT_JWT_SECRET,
  DEV_PARTICIPANT_JWT_SECRET,
  parseEnv,
  postgresUrl,
  secret,
} from "@studyflow/config";

/**
 * The part of the API's environment the CLI and the demo seed use, with the API's defaults: the
 * CLI writes the same database and signs with the same keys, so what it creates the API accepts.
 */
const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** PostgreSQL connection string. */
  DATABASE_URL: postgresUrl,
  /** HS256 key of management tokens (researchers, operators). */
  MANAGEMENT_JWT_SECRET: secret,
  /** HS256 key of participant tokens; a different key from the management one. */
  PARTICIPANT_JWT_SECRET: secret,
  /** Lifetime of password-reset tokens. */
  RESET_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /** Link put into password-reset e-mails; the token is appended as ?token=…. */
  RESET_PASSWORD_URL: z.url().default("http://localhost:8080/reset-password"),
});

export type CliConfig = z.output<typeof schema>;

export function loadConfig(env: Record<string, string | undefined>): CliConfig {
  const withDevDefaults =
    env.NODE_ENV === "production"
      ? env
      : {
          MANAGEMENT_JWT_SECRET: DEV_MANAGEMENT_JWT_SECRET,
          PARTICIPANT_JWT_SECRET: DEV_PARTICIPANT_JWT_SECRET,
          ...env,
        };
  return parseEnv(schema, withDevDefaults);
}

/** The process environment: read here and nowhere else. */
export const processEnv = (): Record<string, string | undefined> => process.env;
