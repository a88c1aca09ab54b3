/**
 * Production refuses the secrets written in the repository. The API, the worker and the CLI each
 * refuse to start in production (NODE_ENV=production) while a secret setting holds a value of
 * packages/config's published list, or while the participant and management keys are equal; the
 * error names the setting, never the value. The scan below reads the repository's tracked files
 * (compose files, env files, docs, config sources, scripts, READMEs) for values given to
 * secret-looking settings, so a value added to a doc later is refused as well, or this fails.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configSchema as apiSchema, loadConfig as loadApiConfig } from "@studyflow/api/config";
import {
  ConfigError,
  DEMO_SECRETS,
  DEV_MANAGEMENT_JWT_SECRET,
  DEV_MANAGEMENT_SECRETS_KEY,
  DEV_PARTICIPANT_JWT_SECRET,
  PUBLISHED_SECRET_VALUES,
  SECRET_SETTING_NAME,
  demoModeWarning,
  isPublishedSecret,
} from "@studyflow/config";
// The CLI's and the worker's packages export no config module: their files, read directly.
import { configSchema as cliSchema, loadConfig as loadCliConfig } from "../../apps/cli/src/config";
import { configSchema as workerSchema, loadConfig as loadWorkerConfig } from "../../apps/worker/src/config";
import { REPO_ROOT, readRepoFile } from "./deployment-files";

type Env = Record<string, string>;

const fresh = (bytes = 48) => randomBytes(bytes).toString("base64");

/** Each app: how it loads, what a fresh production environment of it is, and its secret settings. */
const APPS = {
  api: { schema: apiSchema, load: loadApiConfig },
  worker: { schema: workerSchema, load: loadWorkerConfig },
  cli: { schema: cliSchema, load: loadCliConfig },
} as const;
type App = keyof typeof APPS;

function productionEnv(app: App): Env {
  const env: Env = { NODE_ENV: "production" };
  if (app !== "worker") {
    env.MANAGEMENT_JWT_SECRET = fresh();
    env.PARTICIPANT_JWT_SECRET = fresh();
  }
  return env;
}

/** Settings holding a file's path, not a secret (the mTLS listener's key file). */
const PATH_SETTINGS = new Set(["MANAGEMENT_IDP_SIGNIN_MTLS_KEY"]);
/** Settings holding a URL whose password part is a secret. */
const URL_SETTINGS: Record<App, string[]> = {
  api: ["DATABASE_URL", "REDIS_URL"],
  worker: ["DATABASE_URL", "REDIS_URL", "SMTP_URL"],
  cli: ["DATABASE_URL", "REDIS_URL"],
};
const URL_SCHEMES: Record<string, string> = { DATABASE_URL: "postgres", REDIS_URL: "redis", SMTP_URL: "smtp" };

const secretSettings = (app: App) =>
  Object.keys(APPS[app].schema.shape).filter((name) => SECRET_SETTING_NAME.test(name) && !PATH_SETTINGS.has(name));

/** A setting given `value`: in a URL's password part for the URL settings. */
function withValue(setting: string, value: string): string {
  const scheme = URL_SCHEMES[setting];
  return scheme === undefined ? value : `${scheme}://studyflow:${encodeURIComponent(value)}@db.internal:1/studyflow`;
}

function loadError(app: App, env: Env): string | undefined {
  try {
    APPS[app].load(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe("production configuration and published secrets", () => {
  it("starts with fresh random secrets, and development still takes its defaults", () => {
    for (const app of Object.keys(APPS) as App[]) {
      const env = productionEnv(app);
      expect(loadError(app, env), app).toBeUndefined();
      expect(
        loadError(app, {
          ...env,
          ...(app === "worker" ? { DASHBOARD_USER: "ops", DASHBOARD_PASSWORD: fresh(24) } : {}),
          ...(app === "worker"
            ? {}
            : { MANAGEMENT_SECRETS_KEY: fresh(32), MANAGEMENT_SECRETS_PREVIOUS_KEYS: fresh(32) }),
          DATABASE_URL: withValue("DATABASE_URL", randomBytes(32).toString("hex")),
        }),
        app,
      ).toBeUndefined();
      // `npm start` and the tests: no secret set, the development defaults taken.
      expect(loadError(app, {}), app).toBeUndefined();
      expect(loadError(app, { NODE_ENV: "test" }), app).toBeUndefined();
    }
    const development = loadApiConfig({});
    expect(development.MANAGEMENT_JWT_SECRET).toBe(DEV_MANAGEMENT_JWT_SECRET);
    expect(development.PARTICIPANT_JWT_SECRET).toBe(DEV_PARTICIPANT_JWT_SECRET);
    expect(development.MANAGEMENT_SECRETS_KEY).toBe(DEV_MANAGEMENT_SECRETS_KEY);
    expect(loadCliConfig({}).MANAGEMENT_JWT_SECRET).toBe(DEV_MANAGEMENT_JWT_SECRET);
    expect(loadWorkerConfig({ DASHBOARD_USER: "admin", DASHBOARD_PASSWORD: DEMO_SECRETS.DASHBOARD_PASSWORD })).toEqual(
      expect.objectContaining({ DASHBOARD_PASSWORD: DEMO_SECRETS.DASHBOARD_PASSWORD }),
    );
  });

  it("refuses the development and demo secrets in production, naming the setting and how to make one, never the value", () => {
    const cases: { app: App; env: Env; setting: string; how: RegExp }[] = [
      {
        app: "api",
        env: { MANAGEMENT_JWT_SECRET: DEV_MANAGEMENT_JWT_SECRET },
        setting: "MANAGEMENT_JWT_SECRET",
        how: /openssl rand -base64 48/,
      },
      {
        app: "api",
        env: { PARTICIPANT_JWT_SECRET: DEV_PARTICIPANT_JWT_SECRET },
        setting: "PARTICIPANT_JWT_SECRET",
        how: /openssl rand -base64 48/,
      },
      {
        app: "api",
        env: { MANAGEMENT_JWT_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET },
        setting: "MANAGEMENT_JWT_SECRET",
        how: /openssl rand/,
      },
      {
        app: "api",
        env: { PARTICIPANT_JWT_SECRET: DEMO_SECRETS.PARTICIPANT_JWT_SECRET },
        setting: "PARTICIPANT_JWT_SECRET",
        how: /openssl rand/,
      },
      {
        app: "api",
        env: { MANAGEMENT_SECRETS_KEY: DEV_MANAGEMENT_SECRETS_KEY },
        setting: "MANAGEMENT_SECRETS_KEY",
        how: /openssl rand -base64 32/,
      },
      // The same key spelt without padding, or in the URL-safe alphabet, is the same key.
      {
        app: "api",
        env: { MANAGEMENT_SECRETS_KEY: DEV_MANAGEMENT_SECRETS_KEY.replace(/=+$/, "") },
        setting: "MANAGEMENT_SECRETS_KEY",
        how: /openssl rand -base64 32/,
      },
      {
        app: "api",
        env: { MANAGEMENT_SECRETS_PREVIOUS_KEYS: `${fresh(32)},${DEV_MANAGEMENT_SECRETS_KEY}` },
        setting: "MANAGEMENT_SECRETS_PREVIOUS_KEYS",
        how: /openssl rand -base64 32/,
      },
      {
        app: "api",
        env: { MANAGEMENT_IDP_SIGNIN_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET, MANAGEMENT_SECRETS_KEY: fresh(32) },
        setting: "MANAGEMENT_IDP_SIGNIN_SECRET",
        how: /openssl rand/,
      },
      { app: "api", env: { METRICS_TOKEN: DEV_PARTICIPANT_JWT_SECRET }, setting: "METRICS_TOKEN", how: /openssl rand/ },
      {
        app: "api",
        env: {
          CONSOLE_OIDC_ISSUER: "https://id.example.org",
          CONSOLE_OIDC_CLIENT_ID: "studyflow-console",
          CONSOLE_OIDC_REDIRECT_URI: "https://studyflow.example.org/console/oidc/callback",
          CONSOLE_OIDC_CLIENT_SECRET: DEMO_SECRETS.DASHBOARD_PASSWORD,
          MANAGEMENT_SECRETS_KEY: fresh(32),
        },
        setting: "CONSOLE_OIDC_CLIENT_SECRET",
        how: /openssl rand/,
      },
      {
        app: "api",
        env: { DATABASE_URL: "postgres://studyflow:studyflow@postgres:5432/studyflow" },
        setting: "DATABASE_URL",
        how: /openssl rand -hex 32/,
      },
      {
        app: "worker",
        env: { DASHBOARD_USER: "admin", DASHBOARD_PASSWORD: DEMO_SECRETS.DASHBOARD_PASSWORD },
        setting: "DASHBOARD_PASSWORD",
        how: /openssl rand/,
      },
      {
        app: "worker",
        env: { DATABASE_URL: "postgres://studyflow:studyflow@postgres:5432/studyflow" },
        setting: "DATABASE_URL",
        how: /openssl rand -hex 32/,
      },
      {
        app: "worker",
        env: { SMTP_URL: `smtps://mailer:${encodeURIComponent(DEMO_SECRETS.DASHBOARD_PASSWORD)}@smtp.example.org` },
        setting: "SMTP_URL",
        how: /openssl rand/,
      },
      {
        app: "cli",
        env: { MANAGEMENT_JWT_SECRET: DEV_MANAGEMENT_JWT_SECRET },
        setting: "MANAGEMENT_JWT_SECRET",
        how: /openssl rand -base64 48/,
      },
      {
        app: "cli",
        env: { PARTICIPANT_JWT_SECRET: DEMO_SECRETS.PARTICIPANT_JWT_SECRET },
        setting: "PARTICIPANT_JWT_SECRET",
        how: /openssl rand/,
      },
    ];
    for (const { app, env, setting, how } of cases) {
      const message = loadError(app, { ...productionEnv(app), ...env }) ?? "";
      const line = message.split("\n").find((text) => text.includes(`- ${setting}: `)) ?? "";
      expect(line, `${app}: ${setting}`).toContain(`${setting}: is a value published in the studyflow repository`);
      expect(line, `${app}: ${setting}`).toMatch(how);
      for (const value of Object.values(env)) expect(message, `${app}: ${setting} shows no value`).not.toContain(value);
      // Outside production the same environment starts (development, the tests).
      expect(
        loadError(app, { ...productionEnv(app), ...env, NODE_ENV: "development" }),
        `${app}: ${setting}`,
      ).toBeUndefined();
    }
  });

  it("refuses equal participant and management keys in production", () => {
    const shared = fresh();
    for (const app of ["api", "cli"] as const) {
      const env = { ...productionEnv(app), MANAGEMENT_JWT_SECRET: shared, PARTICIPANT_JWT_SECRET: shared };
      const message = loadError(app, env) ?? "";
      expect(message, app).toMatch(
        /PARTICIPANT_JWT_SECRET: must differ from MANAGEMENT_JWT_SECRET; make one with `openssl rand -base64 48`/,
      );
      expect(message, app).not.toContain(shared);
      // A trailing newline (a secret pasted from a file) makes no difference.
      expect(loadError(app, { ...env, PARTICIPANT_JWT_SECRET: `${shared}\n` }), app).toMatch(/must differ/);
      expect(loadError(app, { ...env, PARTICIPANT_JWT_SECRET: fresh() }), app).toBeUndefined();
    }
  });

  it("accepts the published secrets in production only with STUDYFLOW_DEMO=true, and says so", () => {
    const demo: Record<App, Env> = {
      api: {
        MANAGEMENT_JWT_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET,
        PARTICIPANT_JWT_SECRET: DEMO_SECRETS.PARTICIPANT_JWT_SECRET,
      },
      worker: { DASHBOARD_USER: "admin", DASHBOARD_PASSWORD: DEMO_SECRETS.DASHBOARD_PASSWORD },
      cli: {
        MANAGEMENT_JWT_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET,
        PARTICIPANT_JWT_SECRET: DEMO_SECRETS.PARTICIPANT_JWT_SECRET,
      },
    };
    for (const app of Object.keys(APPS) as App[]) {
      const env = { ...productionEnv(app), ...demo[app] };
      expect(loadError(app, env), app).toMatch(/is a value published/);
      expect(loadError(app, { ...env, STUDYFLOW_DEMO: "false" }), app).toMatch(/is a value published/);
      expect(loadError(app, { ...env, STUDYFLOW_DEMO: "yes" }), app).toMatch(
        /STUDYFLOW_DEMO: must be "true" or "false"/,
      );
      const config = APPS[app].load({ ...env, STUDYFLOW_DEMO: "true" });
      const warning = demoModeWarning(config) ?? "";
      expect(warning, app).toContain("STUDYFLOW_DEMO=true");
      for (const setting of Object.keys(demo[app]).filter((name) => SECRET_SETTING_NAME.test(name))) {
        expect(warning, app).toContain(setting);
      }
      for (const value of Object.values(demo[app])) expect(warning, app).not.toContain(value);
      // Equal keys stay refused in the demo too; nothing is logged outside production or without the mode.
      if (app !== "worker") {
        const shared = {
          MANAGEMENT_JWT_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET,
          PARTICIPANT_JWT_SECRET: DEMO_SECRETS.MANAGEMENT_JWT_SECRET,
        };
        expect(loadError(app, { ...env, ...shared, STUDYFLOW_DEMO: "true" }), app).toMatch(/must differ/);
      }
      expect(demoModeWarning(APPS[app].load(productionEnv(app))), app).toBeUndefined();
      expect(demoModeWarning(APPS[app].load({ STUDYFLOW_DEMO: "true" })), app).toBeUndefined();
    }
  });
});

/** Tracked files where settings are given values: compose and env files, docs, config sources, scripts, READMEs. */
const SCANNED = [
  /(^|\/)(docker-)?compose[^/]*\.ya?ml$/,
  /(^|\/)\.env[^/]*$/,
  /\.env$/,
  /^Dockerfile$/,
  /^docs\/.*\.md$/,
  /(^|\/)README\.md$/,
  /^apps\/[^/]+\/src\/config\.ts$/,
  /^packages\/config\/src\/.*\.ts$/,
  /^packages\/db\/src\/env\.ts$/,
  /^packages\/domain\/src\/access\/secret-box-settings\.ts$/,
  /^apps\/cli\/src\/demo\/.*\.ts$/,
  /^scripts\//,
  /^\.ci\//,
  /^e2e\/case-admin\/.*\.cjs$/,
];

interface Found {
  where: string;
  name: string;
  value: string;
}

/** A value that stands for one to be filled in (`...`, `<the secret>`, `$(openssl …)`, `${VAR}`), not a value. */
const isPlaceholder = (value: string) => value === "" || /^(\.\.\.|…|<|\$)/.test(value) || value.includes("…");

/** Values given to secret-looking names (`NAME=value`, `NAME: value`, `NAME = "value"`) and URL passwords. */
export function secretAssignments(file: string, text: string): Found[] {
  const found: Found[] = [];
  const source = file.endsWith(".ts") || file.endsWith(".cjs");
  const nameEnding = SECRET_SETTING_NAME.source.replace(/\$$/, "").replace(/\((?!\?)/g, "(?:");
  const assignment = new RegExp(
    // Not a name inside a compose reference (`${NAME:?message}`); NEXT_PUBLIC_* are public by definition.
    `(?<!\\$\\{)\\b(?!NEXT_PUBLIC_)([A-Z][A-Z0-9_]*${nameEnding})\\b"?\\s*[:=]\\s*(?:"([^"]*)"|'([^']*)'${source ? "" : "|([^\\s,;)\\]]+)"})`,
    "g",
  );
  text.split(/\r?\n/).forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    for (const match of line.matchAll(assignment)) {
      let value = match[2] ?? match[3] ?? match[4] ?? "";
      // compose: `${NAME:-default}` gives the default, `${NAME:?message}` nothing.
      const reference = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?/.exec(value);
      if (reference) value = reference[1] ?? "";
      if (!isPlaceholder(value)) found.push({ where, name: match[1] ?? "", value });
    }
    for (const match of line.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:([^\s@/]+)@/g)) {
      const value = decodeURIComponent(match[1] ?? "");
      if (!isPlaceholder(value)) found.push({ where, name: "URL password", value });
    }
  });
  return found;
}

describe("the secrets written in the repository", () => {
  const files = execFileSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" })
    .split("\n")
    .filter((file) => SCANNED.some((pattern) => pattern.test(file)));
  const found = files.flatMap((file) => secretAssignments(file, readRepoFile(file)));

  it("finds the values given to secret settings where they are written", () => {
    expect(files).toEqual(
      expect.arrayContaining(["docker-compose.yml", "docker-compose.demo.env", "README.md", "docs/operations.md"]),
    );
    const values = new Set(found.map(({ value }) => value));
    for (const value of [...Object.values(DEMO_SECRETS), DEV_MANAGEMENT_JWT_SECRET, DEV_MANAGEMENT_SECRETS_KEY]) {
      expect(values, value).toContain(value);
    }
    // The reader itself, on the forms it must and must not take as values.
    expect(
      secretAssignments(
        "x.md",
        [
          "export FOO_TOKEN=$(npm run -s cli -- token:management)",
          "MANAGEMENT_JWT_SECRET=... PARTICIPANT_JWT_SECRET=<yours>",
          "  DASHBOARD_PASSWORD: ${DASHBOARD_PASSWORD:?set it}",
          "  DASHBOARD_PASSWORD: ${DASHBOARD_PASSWORD:-hunter2-hunter2}",
          "METRICS_TOKEN=abc123 DATABASE_URL=postgres://u:p%40ss@h/db NEXT_PUBLIC_STUDY_KEY=demo",
          '  DATABASE_URL: "postgres://studyflow:${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in .env}@postgres/db"',
        ].join("\n"),
      ).map(({ name, value }) => `${name}=${value}`),
    ).toEqual(["DASHBOARD_PASSWORD=hunter2-hunter2", "METRICS_TOKEN=abc123", "URL password=p@ss"]);
    expect(secretAssignments("x.ts", 'const SOME_KEY = "k1";\n  MANAGEMENT_JWT_SECRET: secret,')).toEqual([
      { where: "x.ts:1", name: "SOME_KEY", value: "k1" },
    ]);
  });

  it("lists every one of them, and production refuses each in every secret setting, naming the setting", () => {
    const unlisted = found.filter(({ value }) => !isPublishedSecret(value));
    expect(
      unlisted.map(({ where, name }) => `${where} ${name}`),
      "values written in the repository that packages/config/src/published-secrets.ts does not list",
    ).toEqual([]);
    const values = [...new Set([...found.map(({ value }) => value), ...PUBLISHED_SECRET_VALUES])];
    for (const app of Object.keys(APPS) as App[]) {
      const settings = [...secretSettings(app), ...URL_SETTINGS[app]];
      expect(settings.length, app).toBeGreaterThan(0);
      for (const setting of settings) {
        for (const value of values) {
          const message = loadError(app, { ...productionEnv(app), [setting]: withValue(setting, value) });
          expect(message, `${app} starts in production with a published value in ${setting}`).toMatch(
            new RegExp(`- ${escape(setting)}: `),
          );
        }
      }
    }
  });
});
