import { z } from "zod";

/**
 * Secret values that are written in the studyflow repository, and so known to anyone who has read
 * it: the development defaults, the demo's values (docker-compose.demo.env), the defaults
 * docker-compose.yml once had (still in its history), the demo seed's password. In production
 * (NODE_ENV=production) the API, the worker and the CLI refuse to start while a secret setting
 * holds one of them: a management token signed with a published key opens every study.
 *
 * e2e/test/published-secrets.test.ts scans the repository's tracked files for values given to
 * secret settings and fails on one missing here, so a value added to a doc or a compose file
 * later is refused too.
 */

/**
 * Development-only JWT keys. One copy for the API and the operator CLI, so that a token the CLI
 * mints against a development setup is accepted by a development API; production sets its own.
 */
export const DEV_MANAGEMENT_JWT_SECRET = "dev-only-management-secret-change-me-0123456789";
export const DEV_PARTICIPANT_JWT_SECRET = "dev-only-participant-secret-change-me-0123456789";
/**
 * Development-only key of sealed secrets (MANAGEMENT_SECRETS_KEY: the identity provider's refresh
 * tokens, API key copies): base64 of 32 bytes ("dev-only-secrets-key-change-me!!"). Production
 * sets its own.
 */
export const DEV_MANAGEMENT_SECRETS_KEY = "ZGV2LW9ubHktc2VjcmV0cy1rZXktY2hhbmdlLW1lISE=";

/**
 * The demo's secrets, as docker-compose.demo.env gives them to `docker compose` (until the demo
 * moved there, docker-compose.yml's defaults: running deployments may still hold them).
 */
export const DEMO_SECRETS = {
  MANAGEMENT_JWT_SECRET: "compose-demo-management-secret-0123456789abcdef",
  PARTICIPANT_JWT_SECRET: "compose-demo-participant-secret-0123456789abcdef",
  DASHBOARD_PASSWORD: "demo-dashboard-password",
  POSTGRES_PASSWORD: "studyflow",
} as const;

export const PUBLISHED_SECRET_VALUES: readonly string[] = [
  DEV_MANAGEMENT_JWT_SECRET,
  DEV_PARTICIPANT_JWT_SECRET,
  DEV_MANAGEMENT_SECRETS_KEY,
  ...Object.values(DEMO_SECRETS),
  // The demo seed's participant password (apps/cli/src/demo/demo-seed.ts) and the one docs/demo.md
  // resets it to: a setting holding either would be a password anyone can read.
  "Demo-Password-2026!",
  "A-New-Password-2026!",
  // The SMTP_URL example of docs/configuration.md and operations.md (smtp://user:pass@mail.example).
  "pass",
];

/**
 * The settings whose value is a secret, by the names every app gives them. A setting added later
 * with such a name is checked without a change here. (MANAGEMENT_IDP_SIGNIN_MTLS_KEY is a file
 * path; comparing it does no harm.)
 */
export const SECRET_SETTING_NAME = /(SECRET|PASSWORD|_KEY|_KEYS|TOKEN)$/;
/** Settings holding a URL, whose password part (`postgres://user:…@host`) is a secret too. */
const URL_SETTING_NAME = /_URL$/;

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The forms under which a value counts as the same secret: its text, and for base64 its bytes (a
 * key spelt without padding or in the URL-safe alphabet is the same key).
 */
function forms(value: string): string[] {
  const text = value.trim();
  const found = [`text:${text}`];
  if (BASE64.test(text)) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length >= 16) found.push(`bytes:${bytes.toString("hex")}`);
  }
  return found;
}

const PUBLISHED_FORMS: ReadonlySet<string> = new Set(PUBLISHED_SECRET_VALUES.flatMap(forms));

/** Whether a value is one written in the repository (see PUBLISHED_SECRET_VALUES). */
export function isPublishedSecret(value: string): boolean {
  return forms(value).some((form) => PUBLISHED_FORMS.has(form));
}

/** The password part of a URL, if it has one. */
function urlPassword(value: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(value).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}

/** The secret values a setting holds: its value, each of a list, or a URL's password. */
function secretValuesOf(name: string, value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  const strings = values.filter((item): item is string => typeof item === "string");
  if (SECRET_SETTING_NAME.test(name)) return strings;
  if (URL_SETTING_NAME.test(name)) return strings.flatMap((item) => urlPassword(item) ?? []);
  return [];
}

/** The settings of a loaded configuration that hold a published secret, by name. */
export function publishedSecretSettings(config: Record<string, unknown>): string[] {
  return Object.entries(config)
    .filter(([name, value]) => secretValuesOf(name, value).some(isPublishedSecret))
    .map(([name]) => name);
}

/** How to make a value for a setting, as the refusal tells it. */
function howToMake(name: string): string {
  if (name.startsWith("MANAGEMENT_SECRETS_")) return "make a key with `openssl rand -base64 32`";
  if (URL_SETTING_NAME.test(name)) return "give the account a password made with `openssl rand -hex 32`";
  return "make one with `openssl rand -base64 48`";
}

/**
 * STUDYFLOW_DEMO=true lets a production-mode process start with the published secrets, for the
 * demo (docker-compose.demo.yml) only; each process then says so in its log at every start.
 */
export const demoSettings = {
  /**
   * "true" accepts the secrets written in the studyflow repository in production, for the demo
   * compose setup; never set it where real data is kept: anyone can forge tokens for it.
   */
  STUDYFLOW_DEMO: z
    .enum(["true", "false"], { error: 'must be "true" or "false"' })
    .default("false")
    .transform((value) => value === "true"),
};

interface SecretCheckedConfig extends Record<string, unknown> {
  NODE_ENV: string;
  STUDYFLOW_DEMO: boolean;
}

/**
 * What keeps a production configuration from starting: a secret setting holding a published
 * value (unless STUDYFLOW_DEMO), and the participant key equal to the management key (a
 * participant token would then pass for a management one wherever the type went unchecked).
 * Names the setting, never its value.
 */
export function productionSecretIssues(config: SecretCheckedConfig): string[] {
  if (config.NODE_ENV !== "production") return [];
  const issues = config.STUDYFLOW_DEMO
    ? []
    : publishedSecretSettings(config).map(
        (name) =>
          `${name}: is a value published in the studyflow repository (a development or demo default) ` +
          `that anyone can use; ${howToMake(name)}`,
      );
  const management = config.MANAGEMENT_JWT_SECRET;
  if (typeof management === "string" && management.trim() === String(config.PARTICIPANT_JWT_SECRET).trim()) {
    issues.push(
      "PARTICIPANT_JWT_SECRET: must differ from MANAGEMENT_JWT_SECRET; make one with `openssl rand -base64 48`",
    );
  }
  return issues;
}

/**
 * The line a production process logs at start under STUDYFLOW_DEMO=true, naming the settings that
 * hold published secrets; nothing otherwise.
 */
export function demoModeWarning(config: SecretCheckedConfig): string | undefined {
  if (config.NODE_ENV !== "production" || !config.STUDYFLOW_DEMO) return undefined;
  const published = publishedSecretSettings(config);
  return (
    "STUDYFLOW_DEMO=true: this is a demo, not a deployment for real data. " +
    (published.length > 0
      ? `${published.join(", ")} hold secrets published in the studyflow repository: anyone can sign in.`
      : "No published secret is in use.")
  );
}
