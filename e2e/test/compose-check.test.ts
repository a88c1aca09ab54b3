/**
 * docker-compose.yml and the Dockerfile held to the code, with no Docker engine: the variables each
 * service sets are the ones its process reads, its command is a file the image contains, its ports,
 * healthcheck and volumes are the ones the process uses, and the image is built and run as intended.
 * compiled-entries.test.ts runs the compiled files themselves.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema as apiSchema, loadConfig as loadApiConfig } from "@studyflow/api/config";
import { assertDemoSeedAllowed } from "@studyflow/cli/demo";
import { DEMO_SECRETS, SECRET_SETTING_NAME, isPublishedSecret, publishedSecretSettings } from "@studyflow/config";
// The CLI's and the worker's packages export no config module: their files, read directly.
import { configSchema as cliSchema, loadConfig as loadCliConfig } from "../../apps/cli/src/config";
import { configSchema as workerSchema, loadConfig as loadWorkerConfig } from "../../apps/worker/src/config";
import { ENTRIES, OUT_DIR, entryOutput, type EntryName } from "../../esbuild.config";
import {
  REPO_ROOT,
  baseImageOf,
  DEMO_COMPOSE_FILES,
  DEMO_ENV_FILE,
  durationMs,
  entryOfCommand,
  envOf,
  execForm,
  freshComposeVariables,
  instructionsOf,
  MissingComposeVariable,
  loadCompose,
  loadComposeFile,
  loadDockerfile,
  packageOf,
  parseCopy,
  publishedPorts,
  readEnvFile,
  readRepoFile,
  requiredVariables,
  serviceCommand,
  serviceEnv,
  serviceMounts,
  workdirOf,
  workspaces,
  type ComposeService,
  type Instruction,
  type Stage,
} from "./deployment-files";

type Env = Record<string, string>;

/** A zod object schema, seen only through what these checks use of it. */
interface EnvSchema {
  shape: Record<string, { safeParse: (value: unknown) => { success: boolean } }>;
}

interface ProcessFacts {
  /** Every variable the process reads. */
  accepts: string[];
  /** Variables it cannot start without (no default, not optional); production has no dev secrets. */
  required: string[];
  /** The configuration the process builds from the environment at start (throws as it would). */
  load: (env: Env) => { ports: number[]; shutdownMs?: number; resultDir?: string };
  /** Serves until stopped (restart, healthcheck, grace period) rather than running once. */
  longRunning: boolean;
}

const keysOf = (schema: EnvSchema) => Object.keys(schema.shape);
const requiredOf = (schema: EnvSchema) =>
  Object.entries(schema.shape)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([key]) => key);

/** Variables read with `process.env.NAME` in a package's sources (the migrate entry has no schema). */
function processEnvReads(dir: string): string[] {
  const names = new Set<string>();
  for (const file of readdirRecursive(path.join(REPO_ROOT, dir))) {
    if (!file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
    for (const match of readFileSync(file, "utf8").matchAll(
      /process\.env(?:\.([A-Z_][A-Z0-9_]*)|\["([A-Z_][A-Z0-9_]*)"\])/g,
    )) {
      names.add(match[1] ?? match[2] ?? "");
    }
  }
  return [...names].sort();
}

function readdirRecursive(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? readdirRecursive(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

const PROCESSES: Record<EntryName, ProcessFacts> = {
  "api/index": {
    accepts: keysOf(apiSchema),
    required: requiredOf(apiSchema),
    load: (env) => {
      const config = loadApiConfig(env);
      return {
        ports: [config.PORT, ...(config.METRICS_PORT === undefined ? [] : [config.METRICS_PORT])],
        shutdownMs: config.SHUTDOWN_TIMEOUT_MS,
        resultDir: config.RESULT_DIR,
      };
    },
    longRunning: true,
  },
  "worker/index": {
    accepts: keysOf(workerSchema),
    required: requiredOf(workerSchema),
    load: (env) => {
      const config = loadWorkerConfig(env);
      return { ports: [config.HEALTH_PORT], shutdownMs: config.SHUTDOWN_TIMEOUT_MS, resultDir: config.RESULT_DIR };
    },
    longRunning: true,
  },
  "cli/main": {
    accepts: keysOf(cliSchema),
    required: requiredOf(cliSchema),
    load: (env) => {
      loadCliConfig(env);
      return { ports: [] };
    },
    longRunning: false,
  },
  "db/migrate-cli": {
    accepts: processEnvReads("packages/db/src"),
    required: [],
    load: () => ({ ports: [] }),
    longRunning: false,
  },
};

const dockerfile = loadDockerfile();
const runtime = dockerfile.stages.at(-1) as Stage;
const runtimeInstructions = instructionsOf(runtime);

/**
 * One way of starting compose: its files merged, the variables it interpolates them with, and the
 * services built from the Dockerfile and started by a plain `up` that it must define.
 */
function composeSetup(
  label: string,
  files: readonly string[],
  composeVariables: Record<string, string>,
  expected: { built: string[]; started: string[] },
) {
  const compose = loadCompose(files);
  /** The services built from the Dockerfile. */
  const builtServices = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
  /** Those whose command runs a build entry, each with the facts of that process. */
  const appServices = builtServices.flatMap(([name, service]) => {
    const entry = entryOfCommand(serviceCommand(service));
    return entry === undefined
      ? []
      : [{ name, service, entry, env: serviceEnv(service, composeVariables), facts: PROCESSES[entry] }];
  });
  const servicesRunning = (entry: EntryName) => appServices.filter((app) => app.entry === entry);
  return { label, compose, composeVariables, builtServices, appServices, servicesRunning, ...expected };
}

/** `docker compose up`: docker-compose.yml alone, with the secrets an operator's `.env` gives it (random). */
const deployment = composeSetup("docker-compose.yml", ["docker-compose.yml"], freshComposeVariables(), {
  built: ["api", "migrate", "worker", "worker-extra"],
  // Only the extra workers are opt-in; no demo data.
  started: ["api", "mailpit", "migrate", "postgres", "redis", "worker"],
});
/** The demo command: the override merged in, with docker-compose.demo.env's published values. */
const demoDeployment = composeSetup(
  "the demo (docker-compose.yml with docker-compose.demo.yml)",
  DEMO_COMPOSE_FILES,
  readEnvFile(DEMO_ENV_FILE),
  {
    built: ["api", "migrate", "seed", "worker", "worker-extra"],
    started: ["api", "mailpit", "migrate", "postgres", "redis", "seed", "worker"],
  },
);

const runs = (instructions: Instruction[]) =>
  instructions.filter(({ keyword }) => keyword === "RUN").map(({ args }) => args);
const copies = (instructions: Instruction[]) =>
  instructions.filter(({ keyword }) => keyword === "COPY").map(({ args }) => parseCopy(args));
const last = (instructions: Instruction[], keyword: string) =>
  instructions.filter((instruction) => instruction.keyword === keyword).at(-1)?.args;

/** The port and path a healthcheck command fetches, with `process.env.X || N` read from the env. */
function probeOf(test: string[], env: Env): { port: number; path: string } | undefined {
  const script = test.join(" ");
  const literal = /http:\/\/(?:127\.0\.0\.1|localhost):(\d+)(\/[\w/-]*)/.exec(script);
  if (literal) return { port: Number(literal[1]), path: literal[2] ?? "/" };
  const fromEnv = /process\.env\.([A-Z_]+)\s*\|\|\s*(\d+)\)?\s*\+\s*["'](\/[\w/-]*)/.exec(script);
  if (fromEnv) return { port: Number(env[fromEnv[1] ?? ""] ?? fromEnv[2]), path: fromEnv[3] ?? "/" };
  return undefined;
}

/** The healthcheck a service's container runs: its own, else the image's. */
function effectiveHealthcheck(service: ComposeService): { disabled: boolean; test: string[] } {
  const own = service.healthcheck;
  if (own?.disable === true) return { disabled: true, test: [] };
  if (own?.test !== undefined) {
    const test = Array.isArray(own.test) ? own.test : ["CMD-SHELL", own.test];
    return { disabled: test[0] === "NONE", test: test.slice(1) };
  }
  const image = last(runtimeInstructions, "HEALTHCHECK");
  if (image === undefined || image.trim() === "NONE") return { disabled: true, test: [] };
  return { disabled: false, test: execForm(image.slice(image.indexOf("CMD") + "CMD".length)) };
}

// Each check holds for what `docker compose up` starts and for what the demo command starts.
describe.each([deployment, demoDeployment])(
  "$label against the code",
  ({ compose, composeVariables, builtServices, appServices, servicesRunning, built, started: startedByUp }) => {
    it("runs a compiled entry with node in every service built from the Dockerfile", () => {
      expect(builtServices.map(([name]) => name).sort()).toEqual([...built].sort());
      for (const [name, service] of builtServices) {
        const [program, file] = serviceCommand(service);
        expect(program, name).toBe("node");
        expect(
          Object.keys(ENTRIES).map((entry) => entryOutput(entry as EntryName)),
          name,
        ).toContain(file);
      }
      // What `up` starts: every service but the opt-in extra workers.
      const started = Object.entries(compose.services).filter(([, service]) => service.profiles === undefined);
      expect(started.map(([name]) => name).sort()).toEqual([...startedByUp].sort());
    });

    it("sets only variables each process reads, every one it needs, and values it accepts", () => {
      for (const { name, service, env, facts } of appServices) {
        expect(service.env_file, `${name}: env_file hides what is set`).toBeUndefined();
        const unknown = Object.keys(env).filter((key) => !facts.accepts.includes(key));
        expect(unknown, `${name} sets variables its process never reads`).toEqual([]);
        const missing = facts.required.filter((key) => !env[key]);
        expect(missing, `${name} leaves required variables unset`).toEqual([]);
        if (facts.accepts.includes("NODE_ENV")) expect(env.NODE_ENV, `${name}: NODE_ENV`).toBe("production");
        // The process's own configuration loader accepts the environment (lengths, URLs, numbers).
        expect(() => facts.load(env), name).not.toThrow();
      }
    });

    it("points every service at the same database, Redis, queue prefix, keys and mail server", () => {
      const postgres = serviceEnv(compose.services.postgres as ComposeService, composeVariables);
      const databaseUrl = new URL(servicesRunning("db/migrate-cli")[0]?.env.DATABASE_URL ?? "");
      expect(databaseUrl.hostname).toBe("postgres");
      expect(decodeURIComponent(databaseUrl.username)).toBe(postgres.POSTGRES_USER);
      expect(decodeURIComponent(databaseUrl.password)).toBe(postgres.POSTGRES_PASSWORD);
      expect(databaseUrl.pathname).toBe(`/${postgres.POSTGRES_DB}`);
      for (const { name, env } of appServices) {
        expect(env.DATABASE_URL, `${name}: DATABASE_URL`).toBe(databaseUrl.toString());
      }

      const queueUsers = [...servicesRunning("api/index"), ...servicesRunning("worker/index")];
      for (const { name, env } of queueUsers) {
        expect(new URL(env.REDIS_URL ?? "").hostname, `${name}: REDIS_URL`).toBe("redis");
        expect(env.QUEUE_PREFIX, `${name}: QUEUE_PREFIX must agree`).toBe(queueUsers[0]?.env.QUEUE_PREFIX);
      }
      expect(compose.services.redis?.image).toMatch(/^redis:/);

      // What the CLI (the seed) signs, the API must accept.
      for (const key of ["MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET"]) {
        const values = new Set(appServices.filter(({ env }) => key in env).map(({ env }) => env[key]));
        expect(values.size, `${key} differs between services`).toBe(1);
      }

      for (const { name, env } of servicesRunning("worker/index")) {
        const smtp = new URL(env.SMTP_URL ?? "");
        expect(compose.services[smtp.hostname]?.image, `${name}: SMTP_URL`).toMatch(/^axllent\/mailpit:/);
        expect(smtp.port).toBe("1025");
      }

      // The reset link in e-mails opens the API where the host reaches it.
      const api = servicesRunning("api/index")[0];
      const link = new URL(api?.env.RESET_PASSWORD_URL ?? "");
      expect(publishedPorts(api?.service ?? {}).map(({ host }) => host)).toContain(link.port);
    });

    it("publishes each listening port once, fixed, and only from the first worker", () => {
      const hostPorts: string[] = [];
      for (const [name, service] of Object.entries(compose.services)) {
        for (const { host } of publishedPorts(service)) {
          expect(host, `${name}: a fixed host port, not a range`).toMatch(/^\d+$/);
          hostPorts.push(host ?? "");
        }
        if (service.profiles !== undefined || (service.deploy?.replicas ?? 1) > 1) {
          expect(service.ports ?? [], `${name} is meant to scale: no published port`).toEqual([]);
        }
      }
      expect(new Set(hostPorts).size, "host ports are unique").toBe(hostPorts.length);

      for (const { name, service, env, facts } of appServices) {
        const { ports } = facts.load(env);
        for (const { container } of publishedPorts(service)) {
          expect(
            ports,
            `${name} publishes ${container}, its process listens on ${ports.join(", ") || "nothing"}`,
          ).toContain(container);
        }
      }
      // The dashboard docs/operations.md points at: the first worker, on the worker's default admin port.
      const defaultHealthPort = loadWorkerConfig({}).HEALTH_PORT;
      const workers = servicesRunning("worker/index");
      expect(publishedPorts(compose.services.worker as ComposeService)).toEqual([
        { host: String(defaultHealthPort), container: defaultHealthPort },
      ]);
      expect(workers.filter(({ service }) => (service.ports ?? []).length > 0).map(({ name }) => name)).toEqual([
        "worker",
      ]);
      // Its /metrics has no token: published on the host's loopback only.
      expect(compose.services.worker?.ports, "the worker's admin port stays on loopback").toEqual([
        `127.0.0.1:${defaultHealthPort}:${defaultHealthPort}`,
      ]);
      // The extra workers are the same process as the first: same command and environment.
      for (const { name, service, env } of workers) {
        expect(serviceCommand(service), name).toEqual(serviceCommand(compose.services.worker as ComposeService));
        expect(env, name).toEqual(serviceEnv(compose.services.worker as ComposeService, composeVariables));
      }
    });

    it("serves the API's /metrics on an admin port of its own that no host port publishes", () => {
      for (const { name, service, env } of servicesRunning("api/index")) {
        const config = loadApiConfig(env);
        expect(config.METRICS_PORT, `${name}: METRICS_PORT`).toBeDefined();
        expect(config.METRICS_PORT).not.toBe(config.PORT);
        expect(
          publishedPorts(service).map(({ container }) => container),
          `${name}: the metrics port is for a scraper on the compose network`,
        ).not.toContain(config.METRICS_PORT);
      }
      // The image alone (docker run) keeps it off the public port too, and -P does not publish it.
      const imageEnv = envOf(runtimeInstructions);
      const imageConfig = loadApiConfig({
        ...imageEnv,
        MANAGEMENT_JWT_SECRET: "m".repeat(40),
        PARTICIPANT_JWT_SECRET: "p".repeat(40),
      });
      expect(imageConfig.METRICS_PORT).toBeDefined();
      expect(imageConfig.METRICS_PORT).not.toBe(imageConfig.PORT);
      const exposed = (last(runtimeInstructions, "EXPOSE") ?? "")
        .split(/\s+/)
        .map((port) => Number(port.split("/")[0]));
      expect(exposed).not.toContain(imageConfig.METRICS_PORT);
    });

    it("probes the port each long-running process listens on, and no probe on one-shot services", () => {
      for (const { name, service, env, facts } of appServices) {
        const health = effectiveHealthcheck(service);
        if (!facts.longRunning) {
          expect(health.disabled, `${name} runs once: the image's API probe would only fail`).toBe(true);
          continue;
        }
        expect(health.disabled, name).toBe(false);
        const probe = probeOf(health.test, env);
        expect(probe, `${name}: healthcheck ${health.test.join(" ")}`).toBeDefined();
        expect(facts.load(env).ports, `${name}: the healthcheck's port`).toContain(probe?.port);
        expect(probe?.path, name).toBe("/healthz");
        // Exec form with node: the slim image has no curl or wget.
        expect(health.test[0], name).toBe("node");
      }
    });

    it("restarts long-running services and gives them time to shut down before SIGKILL", () => {
      for (const { name, service, env, facts } of appServices) {
        if (!facts.longRunning) {
          expect(service.restart, name).toBe("no");
          continue;
        }
        expect(service.restart, name).toBe("unless-stopped");
        const shutdownMs = facts.load(env).shutdownMs ?? 0;
        expect(durationMs(service.stop_grace_period), `${name}: stop_grace_period`).toBeGreaterThan(shutdownMs);
      }
    });

    it("keeps the API's and every worker's RESULT_DIR on one named volume the image gives to its user", () => {
      const resultVolumes = new Set<string>();
      for (const { name, service, env, facts } of [
        ...servicesRunning("api/index"),
        ...servicesRunning("worker/index"),
      ]) {
        const resultDir = facts.load(env).resultDir ?? "";
        const mount = serviceMounts(service).find(({ target }) => target === resultDir);
        expect(mount, `${name}: RESULT_DIR ${resultDir} is not mounted`).toBeDefined();
        expect(mount?.named, `${name}: ${resultDir} on a named volume`).toBe(true);
        resultVolumes.add(mount?.source ?? "");
      }
      expect(resultVolumes.size, "api and workers share one results volume").toBe(1);
      const [volume] = [...resultVolumes];
      expect(Object.keys(compose.volumes ?? {})).toContain(volume);
      expect(ownedByRuntimeUser(servicesRunning("api/index")[0]?.env.RESULT_DIR ?? "")).toBe(true);
    });

    it("runs every process as the image's unprivileged user, with no host folder mounted", () => {
      for (const { name, service } of appServices) {
        expect(service.user, `${name} runs as the image's user`).toBeUndefined();
        const binds = serviceMounts(service).filter(({ named }) => !named);
        expect(binds, `${name}: host folders would get files of the container's user`).toEqual([]);
      }
    });

    it("pins every image to a version", () => {
      for (const [name, service] of Object.entries(compose.services)) {
        if (service.image === undefined) continue;
        expect(service.image, name).toMatch(/^[\w./-]+:v?\d+\.\d+(\.\d+)?$/);
      }
      for (const stage of dockerfile.stages.filter((candidate) => candidate.base === undefined)) {
        expect(stage.from).toMatch(/^[\w./-]+:\d+\.\d+\.\d+-[\w.-]+$/);
      }
      // The tests and CI run on the Node the image ships.
      const nodeVersion = /^node:(\d+\.\d+\.\d+)-/.exec(baseImageOf(runtime))?.[1];
      expect(nodeVersion).toBe(readRepoFile(".nvmrc").trim());
      const ciNode = /^NODE_VERSION=(\S+)$/m.exec(readRepoFile(".ci/run"))?.[1];
      if (ciNode !== undefined) expect(nodeVersion).toBe(ciNode);
    });
  },
);

describe("docker-compose.yml's secrets and the demo override", () => {
  const { compose, composeVariables, builtServices } = deployment;
  const required = requiredVariables();
  const override = loadComposeFile("docker-compose.demo.yml");
  const overrideServices = override.services as Record<string, ComposeService>;
  const demoVariables = demoDeployment.composeVariables;
  /** Every variable a service sets that holds a secret: by its name, or a URL with a password. */
  const secretsOf = (file: string, services: [string, ComposeService][], variables: Record<string, string>) =>
    services.flatMap(([name, service]) => {
      const resolved = serviceEnv(service, variables);
      return Object.entries(service.environment as Record<string, string>)
        .filter(([key]) => SECRET_SETTING_NAME.test(key) || (key.endsWith("_URL") && urlHasPassword(resolved[key])))
        .map(([key, value]) => ({ service: `${file}: ${name}`, key, value: String(value) }));
    });
  const secretEntries = secretsOf("docker-compose.yml", builtServices, composeVariables);
  const overrideSecretEntries = secretsOf("docker-compose.demo.yml", Object.entries(overrideServices), demoVariables);

  it("sets no secret: each is required with a message saying how to make it, none has a default", () => {
    expect(secretEntries.map(({ key }) => key)).toEqual(
      expect.arrayContaining(["MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET", "DASHBOARD_PASSWORD", "DATABASE_URL"]),
    );
    // The demo's seed spells out the database URL and the keys itself (anchors stay in their file).
    expect(overrideSecretEntries.map(({ key }) => key).sort()).toEqual(
      ["DATABASE_URL", "MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET"].sort(),
    );
    // The same variables with the same messages, so either file stops with the same words.
    for (const [variable, message] of requiredVariables("docker-compose.demo.yml")) {
      expect(required.get(variable), `docker-compose.demo.yml: ${variable}`).toBe(message);
    }
    const postgres = compose.services.postgres?.environment as Record<string, string>;
    for (const { service, key, value } of [
      ...secretEntries,
      ...overrideSecretEntries,
      { service: "postgres", key: "POSTGRES_PASSWORD", value: postgres.POSTGRES_PASSWORD ?? "" },
    ]) {
      const references = [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}/g)];
      expect(references.length, `${service}: ${key} comes from a variable, not the file`).toBeGreaterThan(0);
      for (const [, variable = "", rest = ""] of references) {
        expect(rest, `${service}: ${key} takes \${${variable}:?…} without a default`).toMatch(/^:\?/);
        const message = required.get(variable) ?? "";
        expect(message, `${service}: ${variable}'s message names it`).toContain(variable);
        expect(message, `${service}: ${variable}'s message says how to make one`).toMatch(
          /openssl rand -(base64|hex) \d+/,
        );
        expect(message).toContain("docs/operations.md#secrets");
      }
      // The text outside the reference (a URL's scheme, user and host) holds no secret.
      const literal = value.replace(/\$\{[^}]*\}/g, "");
      expect(literal).not.toMatch(/:\/\/[^/@]*:[^/@]+@/);
    }
    // No default anywhere in either file stands in for a secret.
    for (const file of DEMO_COMPOSE_FILES) {
      for (const match of readRepoFile(file).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}]*)\}/g)) {
        expect(SECRET_SETTING_NAME.test(match[1] ?? ""), `${file}: \${${match[1]}} has a default`).toBe(false);
        expect(isPublishedSecret(match[2] ?? ""), `${file}: \${${match[1]}}'s default is a published secret`).toBe(
          false,
        );
      }
    }
  });

  it("stops, naming the variable, where a secret is not given (as `docker compose up` does)", () => {
    for (const variable of required.keys()) {
      const partial = Object.fromEntries(Object.entries(composeVariables).filter(([name]) => name !== variable));
      const services = Object.values(compose.services);
      expect(() => services.map((service) => serviceEnv(service, partial)), variable).toThrow(
        new RegExp(`required variable ${variable} is missing a value: set ${variable} in \\.env`),
      );
      expect(() => services.map((service) => serviceEnv(service, { ...partial, [variable]: "" })), variable).toThrow(
        MissingComposeVariable,
      );
    }
    expect([...required.keys()].sort()).toEqual(
      ["DASHBOARD_PASSWORD", "MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET", "POSTGRES_PASSWORD"].sort(),
    );
    // The demo's seed, interpolated on its own as compose does each file, stops the same way.
    const seed = overrideServices.seed ?? {};
    for (const variable of requiredVariables("docker-compose.demo.yml").keys()) {
      const partial = Object.fromEntries(Object.entries(demoVariables).filter(([name]) => name !== variable));
      expect(() => serviceEnv(seed, partial), `seed: ${variable}`).toThrow(
        new RegExp(`required variable ${variable} is missing a value`),
      );
    }
  });

  it("publishes every port on the host's loopback only", () => {
    for (const [name, service] of [
      ...Object.entries(compose.services),
      ...Object.entries(demoDeployment.compose.services),
    ]) {
      for (const port of service.ports ?? []) {
        // The short syntax names the host address; the long one would need host_ip, not used here.
        expect(typeof port, `${name}: ports in the short syntax`).toBe("string");
        expect(port, `${name} publishes a port on every interface`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      }
    }
  });

  it("starts no demo with `docker compose up`: no seed service, nothing runs demo:seed, no demo volume or mode", () => {
    expect(Object.keys(compose.services)).not.toContain("seed");
    expect(Object.keys(compose.volumes ?? {})).not.toContain("demo");
    // Every value of the file, its x- blocks included (comments are not values): none names the seed.
    const values = stringsIn(loadComposeFile("docker-compose.yml"));
    expect(values.filter((value) => /demo:seed/.test(value))).toEqual([]);
    expect(deployment.servicesRunning("cli/main").map(({ name }) => name)).toEqual([]);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(serviceEnv(service, composeVariables).STUDYFLOW_DEMO, `${name}: the demo's mode`).toBeUndefined();
    }
  });

  it("runs the demo with docker-compose.demo.env and the override: the secrets production refuses, accepted as a demo", () => {
    // The env file gives exactly the variables docker-compose.yml requires, the demo's published values.
    expect(Object.keys(demoVariables).sort()).toEqual([...required.keys()].sort());
    expect(demoVariables).toEqual(DEMO_SECRETS);
    for (const value of Object.values(demoVariables)) expect(isPublishedSecret(value)).toBe(true);

    // The override adds STUDYFLOW_DEMO to the environment of services docker-compose.yml has, and
    // the seed and its volume, which are its own.
    expect(Object.keys(override).filter((key) => !key.startsWith("x-"))).toEqual(["services", "volumes"]);
    expect(Object.keys(override.volumes as Record<string, unknown>)).toEqual(["demo"]);
    expect(Object.keys(overrideServices).filter((name) => !(name in compose.services))).toEqual(["seed"]);
    for (const [name, service] of Object.entries(overrideServices)) {
      if (name === "seed") continue;
      expect(Object.keys(service), name).toEqual(["environment"]);
      expect(service.environment, name).toEqual({ STUDYFLOW_DEMO: "true" });
    }

    const refused = new Set<string>();
    for (const { name, env, facts } of demoDeployment.appServices) {
      // The migrations read DATABASE_URL alone: no mode, and nothing but the database to protect.
      if (!facts.accepts.includes("STUDYFLOW_DEMO")) continue;
      const unknown = Object.keys(env).filter((key) => !facts.accepts.includes(key));
      expect(unknown, `${name} sets variables its process never reads`).toEqual([]);
      expect(env.NODE_ENV, name).toBe("production");
      expect(env.STUDYFLOW_DEMO, `${name}: the demo's mode`).toBe("true");
      expect(() => facts.load(env), name).not.toThrow();
      // Without the override, production refuses the same environment, naming each published secret.
      const { STUDYFLOW_DEMO: _mode, ...withoutMode } = env;
      const published = publishedSecretSettings(env);
      expect(published.length, name).toBeGreaterThan(0);
      for (const key of published) refused.add(key);
      for (const key of published) {
        expect(() => facts.load(withoutMode), `${name}: ${key}`).toThrow(
          new RegExp(`${key}: is a value published in the studyflow repository`),
        );
      }
    }
    expect([...refused].sort()).toEqual(
      ["DASHBOARD_PASSWORD", "DATABASE_URL", "MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET"].sort(),
    );
    // What the seed signs, the demo's API accepts; the extra workers run as the first.
    const demoApps = demoDeployment.appServices;
    expect(demoApps.map(({ name }) => name)).toContain("seed");
    for (const key of ["MANAGEMENT_JWT_SECRET", "PARTICIPANT_JWT_SECRET"]) {
      expect(new Set(demoApps.filter(({ env }) => key in env).map(({ env }) => env[key])).size, key).toBe(1);
    }
    const workers = demoApps.filter(({ entry }) => entry === "worker/index");
    for (const { name, env } of workers) expect(env, name).toEqual(workers[0]?.env);
  });

  it("has the demo's seed run demo:seed in the demo's mode, writing its file into a named volume as the image's user", () => {
    const [seed, ...others] = demoDeployment.servicesRunning("cli/main");
    expect(seed?.name).toBe("seed");
    expect(others).toEqual([]);
    const command = serviceCommand(seed?.service ?? {});
    expect(command.slice(2, 3)).toEqual(["demo:seed"]);
    const out = command[command.indexOf("--out") + 1] ?? "";
    const mount = serviceMounts(seed?.service ?? {}).find(({ target }) => target === path.posix.dirname(out));
    expect(mount?.named, `--out ${out} lies on a named volume`).toBe(true);
    expect(Object.keys(demoDeployment.compose.volumes ?? {})).toContain(mount?.source);
    expect(ownedByRuntimeUser(path.posix.dirname(out))).toBe(true);

    // demo:seed runs in the demo's mode; the same service with an operator's own secrets and
    // without the mode is refused by the seed itself, not only by the published-secret check.
    expect(() => assertDemoSeedAllowed(loadCliConfig(seed?.env ?? {}))).not.toThrow();
    const { STUDYFLOW_DEMO: _mode, ...production } = serviceEnv(seed?.service ?? {}, composeVariables);
    const config = loadCliConfig(production);
    expect(config.NODE_ENV).toBe("production");
    expect(() => assertDemoSeedAllowed(config)).toThrow(/the demo seed refuses to run with NODE_ENV=production/);
  });
});

describe("the Dockerfile", () => {
  const buildStage = dockerfile.stages.find((stage) =>
    runs(stage.instructions).some((run) => /\bnpm run build\b/.test(run)),
  );

  it("builds in a stage of its own, with the dev dependencies", () => {
    expect(buildStage, "a stage runs npm run build").toBeDefined();
    expect(buildStage).not.toBe(runtime);
    const installs = runs(instructionsOf(buildStage as Stage)).filter((run) => /\bnpm ci\b/.test(run));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).not.toMatch(/--omit[= ]dev|--production/);
    const copied = copies(instructionsOf(buildStage as Stage)).flatMap(({ sources }) => sources);
    expect(copied).toContain("esbuild.config.ts");
    for (const source of Object.values(ENTRIES)) {
      expect(
        copied.some((dir) => source.startsWith(`${dir}/`)),
        `the build stage copies ${source}`,
      ).toBe(true);
    }
  });

  it("runs with production dependencies, the compiled dist/ and no npm, as a non-root user under tini", () => {
    const installs = runs(runtimeInstructions).filter((run) => /\bnpm ci\b/.test(run));
    expect(installs.at(-1)).toMatch(/--omit[= ]dev/);
    expect(runs(runtime.instructions).join("\n")).not.toMatch(/npm run build/);

    // dist/ comes from the build stage's output into the WORKDIR the commands' paths start from.
    const workdir = workdirOf(runtimeInstructions);
    const fromBuild = copies(runtime.instructions).filter(({ from }) => from === buildStage?.name);
    const buildOutput = path.posix.join(workdirOf(instructionsOf(buildStage as Stage)), OUT_DIR);
    expect(
      fromBuild.some(
        ({ sources, destination }) =>
          sources.includes(buildOutput) &&
          path.posix.resolve(workdir, destination) === path.posix.join(workdir, OUT_DIR),
      ),
      `COPY --from=${buildStage?.name} ${buildOutput} ${OUT_DIR}`,
    ).toBe(true);
    expect(runtimeInstructions.some(({ keyword, args }) => keyword === "ENV" && /NODE_ENV=production/.test(args))).toBe(
      true,
    );

    const user = last(runtimeInstructions, "USER")?.trim() ?? "root";
    expect(user).not.toMatch(/^(root|0)(:|$)/);

    const entrypoint = execForm(last(runtimeInstructions, "ENTRYPOINT") ?? "[]");
    expect(entrypoint[0], "tini is PID 1 and passes SIGTERM on").toMatch(/(^|\/)tini$/);
    expect(runs(runtimeInstructions).some((run) => /apt-get install[^&]*\btini\b/.test(run))).toBe(true);
    const command = execForm(last(runtimeInstructions, "CMD") ?? "[]");
    expect(command[0]).toBe("node");
    expect(entryOfCommand(command)).toBe("api/index");
    for (const program of [...entrypoint, ...command]) expect(program).not.toMatch(/^(npm|npx|tsx)$/);

    const healthcheck = last(runtimeInstructions, "HEALTHCHECK") ?? "";
    const apiDefaults = loadApiConfig({ NODE_ENV: "development" });
    expect(probeOf(execForm(healthcheck.slice(healthcheck.indexOf("CMD") + 3)), {})).toEqual({
      port: apiDefaults.PORT,
      path: "/healthz",
    });
  });

  it("gives npm ci every workspace manifest, and the dev-only workspaces bring no package of their own", () => {
    const copied = copies(runtimeInstructions).flatMap(({ sources }) => sources);
    expect(copied).toEqual(expect.arrayContaining(["package.json", "package-lock.json"]));
    const all = workspaces();
    for (const { dir } of all) expect(copied, `COPY ${dir}/package.json`).toContain(`${dir}/package.json`);

    // The workspaces the entries are built from, and what they pull in from each other.
    const byName = new Map(all.map((workspace) => [workspace.name, workspace]));
    const used = new Set<string>();
    const visit = (name: string) => {
      if (used.has(name)) return;
      used.add(name);
      for (const dependency of Object.keys(byName.get(name)?.dependencies ?? {})) {
        if (byName.has(dependency)) visit(dependency);
      }
    };
    for (const source of Object.values(ENTRIES)) {
      const owner = all.find(({ dir }) => source.startsWith(`${dir}/`));
      if (owner) visit(owner.name);
    }
    const runtimePackages = new Set(
      all.filter(({ name }) => used.has(name)).flatMap(({ dependencies }) => Object.keys(dependencies)),
    );
    const devOnly = all.filter(({ name }) => !used.has(name));
    expect(devOnly.map(({ dir }) => dir).sort()).toEqual(["e2e", "packages/testkit"]);
    for (const { dir, dependencies } of devOnly) {
      const extra = Object.keys(dependencies).filter(
        (name) => !byName.has(name) && !runtimePackages.has(packageOf(name)),
      );
      expect(extra, `${dir}'s dependencies would be installed into the runtime image`).toEqual([]);
    }
  });

  it("keeps node_modules and dist/ out of the build context", () => {
    const ignored = readRepoFile(".dockerignore")
      .split(/\r?\n/)
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(["node_modules", "**/node_modules", "dist"]));
  });
});

/** Every string value in a parsed YAML document, however deep. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

function urlHasPassword(value: string | undefined): boolean {
  try {
    return new URL(value ?? "").password !== "";
  } catch {
    return false;
  }
}

/** Whether the runtime stage creates `dir` and hands it to its (non-root) user before switching to it. */
function ownedByRuntimeUser(dir: string): boolean {
  const user = last(runtimeInstructions, "USER")?.trim().split(":")[0] ?? "";
  return runs(runtimeInstructions).some(
    (run) =>
      new RegExp(`mkdir -p [^&]*${escape(dir)}(\\s|$)`).test(run) &&
      new RegExp(`chown (-R )?${escape(user)}(:\\w+)? [^&]*${escape(dir)}(\\s|$)`).test(run),
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
