/**
 * The compiled entries as the image runs them: `npm run build` once, then each compose service's
 * command started with plain `node` (no npm, no tsx: the process gets SIGTERM itself, as under tini)
 * from the repository root (the image's /app), with that service's compose environment pointed at
 * the test services. No Docker engine needed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEmptyDatabase,
  createTestDatabase,
  createTestRedis,
  deletePrefix,
  testRedisUrl,
  uniqueQueuePrefix,
  waitForHttpOk,
} from "@studyflow/testkit";
import {
  ENTRIES,
  INLINED_PACKAGES,
  LOADED_ENTRIES,
  METAFILE,
  OUT_DIR,
  entriesOf,
  type EntryName,
} from "../../esbuild.config";
import { freePort } from "./fault-harness";
import { expectedThreadPool, libuvPoolThreads } from "./thread-pool-probe";
import { CAPPED_NEW_SPACE_BYTES, newSpaceBytes } from "./young-generation-probe";
import {
  DEMO_COMPOSE_FILES,
  DEMO_ENV_FILE,
  REPO_ROOT,
  envOf,
  execForm,
  freshComposeVariables,
  loadCompose,
  loadDockerfile,
  instructionsOf,
  packageOf,
  packagesLoadedBy,
  readEnvFile,
  serviceCommand,
  serviceEnv,
  type ComposeService,
  type Stage,
} from "./deployment-files";

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

interface Started {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output: () => string;
  exited: Promise<Finished>;
}

const compose = loadCompose();
const service = (name: string) => compose.services[name] as ComposeService;
/** The secrets docker-compose.yml requires, as an operator's `.env` gives them. */
const composeVariables = freshComposeVariables();
/** The demo's seed, which only the demo command starts, with the demo's published secrets. */
const demoSeed = loadCompose(DEMO_COMPOSE_FILES).services.seed as ComposeService;
const demoVariables = readEnvFile(DEMO_ENV_FILE);
const runtimeStage = loadDockerfile().stages.at(-1) as Stage;
const imageHealthcheck = instructionsOf(runtimeStage)
  .filter(({ keyword }) => keyword === "HEALTHCHECK")
  .at(-1)?.args;

/** What every process gets besides its compose environment: the image's ENV (NODE_ENV, NODE_OPTIONS, …). */
const IMAGE_ENV = { PATH: process.env.PATH ?? "", ...envOf(instructionsOf(runtimeStage)) };

function start(program: string, args: string[], env: Record<string, string>, cwd = REPO_ROOT): Started {
  const child = spawn(program, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, output }));
  });
  return { child, output: () => output, exited };
}

const run = (program: string, args: string[], env: Record<string, string>, cwd = REPO_ROOT) =>
  start(program, args, env, cwd).exited;

/** Polls `url` until it answers 200; fails at once if the process ends first. */
function waitForOk(url: string, process: Started, timeoutMs = 20_000): Promise<void> {
  let ended: Finished | undefined;
  void process.exited.then((finished) => (ended = finished));
  return waitForHttpOk(url, {
    gone: () => (ended ? `exited (${ended.code ?? ended.signal}) before it answered:\n${ended.output}` : undefined),
    output: process.output,
    timeoutMs,
  });
}

/** SIGTERM, as `docker stop` sends it through tini; resolves with how the process ended and when. */
async function stop(process: Started): Promise<Finished & { ms: number }> {
  const sent = Date.now();
  process.child.kill("SIGTERM");
  const finished = await process.exited;
  return { ...finished, ms: Date.now() - sent };
}

/** A compose healthcheck's exec-form test (`["CMD", …]`), as the argument vector it runs. */
function healthcheckArgs(name: string): string[] {
  const test = service(name).healthcheck?.test;
  if (!Array.isArray(test) || test[0] !== "CMD") throw new Error(`${name}: expected an exec-form healthcheck`);
  return test.slice(1);
}

describe("the compiled entries", () => {
  // Inside the repository, so the bundles import from its node_modules as the image's do from /app's.
  const buildRoot = path.join(REPO_ROOT, "node_modules", ".cache", `studyflow-build-${randomBytes(4).toString("hex")}`);
  const outDir = path.join(buildRoot, OUT_DIR);
  /** A compose command's file (`dist/api/index.js`), in this test's build. */
  const compiled = (file: string) => path.join(buildRoot, file);
  const entryFile = (name: EntryName) => path.join(outDir, `${name}.js`);
  /** What esbuild recorded of this test's build: its input files, and each output's imports. */
  const readMetafile = () =>
    JSON.parse(readFileSync(path.join(outDir, METAFILE), "utf8")) as {
      inputs: Record<string, unknown>;
      outputs: Record<string, { entryPoint?: string; imports: { path: string; external?: boolean }[] }>;
    };
  const redisPrefixes: string[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const build = await run("npm", ["run", "-s", "build", "--", "--outdir", outDir], {
      ...(process.env as Record<string, string>),
    });
    expect(build.code, build.output).toBe(0);
  });

  afterAll(async () => {
    await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
    if (redisPrefixes.length > 0) {
      const redis = createTestRedis();
      try {
        for (const prefix of redisPrefixes) await deletePrefix(redis, prefix);
      } finally {
        redis.disconnect();
      }
    }
    await rm(buildRoot, { recursive: true, force: true });
  });

  it("writes every entry the compose commands run, with source maps, the migrations and the files the code reads", () => {
    for (const name of Object.keys(ENTRIES) as EntryName[]) {
      expect(existsSync(entryFile(name)), name).toBe(true);
      expect(existsSync(`${entryFile(name)}.map`), `${name} source map`).toBe(true);
    }
    // what an entry loads at run time, beside it
    for (const name of Object.keys(LOADED_ENTRIES))
      expect(existsSync(path.join(outDir, `${name}.js`)), name).toBe(true);
    for (const [name, definition] of Object.entries(compose.services)) {
      if (definition.build === undefined) continue;
      const file = serviceCommand(definition)[1] ?? "";
      expect(existsSync(compiled(file)), `${name}: ${file}`).toBe(true);
    }
    expect(existsSync(path.join(outDir, "migrations", "meta", "_journal.json"))).toBe(true);
    // Every bundle that checks passwords has the list beside it (see esbuild.config.ts).
    for (const name of Object.keys(ENTRIES) as EntryName[]) {
      if (!readFileSync(entryFile(name), "utf8").includes("common-passwords.txt")) continue;
      expect(existsSync(path.join(path.dirname(entryFile(name)), "common-passwords.txt")), name).toBe(true);
    }
  });

  it("imports from node_modules only packages `npm ci --omit=dev` installs at the top level", () => {
    const metafile = readMetafile();
    const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
    };
    const outputs = Object.values(metafile.outputs).filter(({ entryPoint }) => entryPoint !== undefined);
    expect(outputs).toHaveLength(Object.keys(entriesOf()).length);
    for (const { entryPoint, imports } of outputs) {
      for (const { path: specifier } of imports.filter(({ external }) => external)) {
        if (isBuiltin(specifier)) continue;
        const name = packageOf(specifier);
        expect(name, `${entryPoint}: workspace code is inlined`).not.toMatch(/^@studyflow\//);
        const locked = lock.packages[`node_modules/${name}`];
        expect(locked, `${entryPoint} imports ${specifier}: hoisted in node_modules`).toBeDefined();
        expect(locked?.dev ?? false, `${entryPoint} imports ${specifier}: a dev dependency`).toBe(false);
        // devOptional packages (typescript) are removed from the image.
        expect(locked?.devOptional ?? false, `${entryPoint} imports ${specifier}: dev or optional only`).toBe(false);
      }
    }
  });

  it("inlines INLINED_PACKAGES, which no bundle imports and no package it imports loads", () => {
    const metafile = readMetafile();
    const inlined = new Set(INLINED_PACKAGES);
    const external = new Set<string>();
    for (const { entryPoint, imports } of Object.values(metafile.outputs)) {
      for (const { path: specifier } of imports.filter((entry) => entry.external && !isBuiltin(entry.path))) {
        expect(inlined.has(packageOf(specifier)), `${entryPoint} imports ${specifier} from node_modules`).toBe(false);
        external.add(specifier);
      }
    }
    // inlined for real: their modules are inputs of the build (drizzle's query builder, zod's core)
    const inputs = Object.keys(metafile.inputs);
    for (const name of ["drizzle-orm", "zod"])
      expect(
        inputs.some((input) => input.startsWith(`node_modules/${name}/`)),
        name,
      ).toBe(true);
    // an external package that loaded an inlined one would bring a second copy of it
    for (const [specifier, packages] of Object.entries(packagesLoadedBy([...external], REPO_ROOT))) {
      expect(packages, `${specifier} loads`).toContain(packageOf(specifier));
      expect(
        packages.filter((name) => inlined.has(name)),
        `${specifier} loads an inlined package itself`,
      ).toEqual([]);
    }
  });

  it("applies the migrations to an empty database with the migrate service's command", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    const [, file = ""] = serviceCommand(service("migrate"));
    // From another directory than the image's: the migrations are found from the bundle's own file.
    const elsewhere = await mkdtemp(path.join(tmpdir(), "sf-migrate-"));
    cleanups.push(() => rm(elsewhere, { recursive: true, force: true }));
    const result = await run(
      process.execPath,
      [compiled(file)],
      { ...IMAGE_ENV, ...serviceEnv(service("migrate"), composeVariables), DATABASE_URL: database.url },
      elsewhere,
    );
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("migrations applied");

    const journal = JSON.parse(readFileSync(path.join(outDir, "migrations", "meta", "_journal.json"), "utf8")) as {
      entries: unknown[];
    };
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await sql<{ applied: number }[]>`select count(*)::int as applied from drizzle.__drizzle_migrations`;
      expect(row?.applied).toBe(journal.entries.length);
    } finally {
      await sql.end();
    }
  });

  // Four bundled processes and two databases (90 s): on a busy two-core machine each start takes seconds.
  it("runs the CLI: help, migrate, the demo seed service's demo:seed and the bundled password list", async () => {
    const [, file = "", ...seedArgs] = serviceCommand(demoSeed);
    const cli = compiled(file);
    const help = await run(process.execPath, [cli, "help"], IMAGE_ENV);
    expect(help.code, help.output).toBe(0);
    expect(help.output).toContain("demo:seed");

    const empty = await createEmptyDatabase();
    cleanups.push(empty.drop);
    const seedEnv = { ...IMAGE_ENV, ...serviceEnv(demoSeed, demoVariables) };
    const migrated = await run(process.execPath, [cli, "migrate"], { ...seedEnv, DATABASE_URL: empty.url });
    expect(migrated.code, migrated.output).toBe(0);

    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const outDirectory = await mkdtemp(path.join(tmpdir(), "sf-seed-"));
    cleanups.push(() => rm(outDirectory, { recursive: true, force: true }));
    const out = path.join(outDirectory, "demo.json");
    // The seed service's own arguments, with the file elsewhere and fewer participants.
    const args = seedArgs.map((arg, index) => (seedArgs[index - 1] === "--out" ? out : arg));
    const seeded = await run(process.execPath, [cli, ...args, "--participants", "50"], {
      ...seedEnv,
      DATABASE_URL: database.url,
    });
    expect(seeded.code, seeded.output).toBe(0);
    const demo = JSON.parse(await readFile(out, "utf8")) as Record<string, unknown>;
    expect(demo.researcherToken).toEqual(expect.any(String));

    // The common-password list is read from beside the bundle.
    const weak = await run(
      process.execPath,
      [cli, "user:create", "--email", "weak@example.org", "--password", "Qwerty123456!"],
      { ...seedEnv, DATABASE_URL: database.url },
    );
    expect(weak.code, weak.output).toBe(1);
    expect(weak.output).toContain("password is too common");
  }, 90_000);

  it("refuses the demo seed's command in a production deployment: an operator's own secrets, no demo mode", async () => {
    const [, file = "", ...seedArgs] = serviceCommand(demoSeed);
    const { STUDYFLOW_DEMO: _mode, ...production } = serviceEnv(demoSeed, composeVariables);
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const outDirectory = await mkdtemp(path.join(tmpdir(), "sf-seed-refused-"));
    cleanups.push(() => rm(outDirectory, { recursive: true, force: true }));
    const out = path.join(outDirectory, "demo", "demo.json");
    const args = seedArgs.map((arg, index) => (seedArgs[index - 1] === "--out" ? out : arg));
    const refused = await run(process.execPath, [compiled(file), ...args, "--participants", "50"], {
      ...IMAGE_ENV,
      ...production,
      DATABASE_URL: database.url,
    });
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toContain("the demo seed refuses to run with NODE_ENV=production");
    // Before it wrote a row or the file.
    expect(existsSync(path.dirname(out))).toBe(false);
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await sql<{ studies: number; users: number; participants: number }[]>`
        select (select count(*)::int from studies) as studies, (select count(*)::int from users) as users,
          (select count(*)::int from participants) as participants`;
      expect(row).toEqual({ studies: 0, users: 0, participants: 0 });
    } finally {
      await sql.end();
    }
  });

  /** A fresh database, result directory, queue prefix and port for one compose service's command. */
  async function serviceRun(name: string) {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const resultDir = await mkdtemp(path.join(tmpdir(), `sf-${name}-`));
    cleanups.push(() => rm(resultDir, { recursive: true, force: true }));
    const prefix = uniqueQueuePrefix();
    redisPrefixes.push(prefix);
    const composeEnv = serviceEnv(service(name), composeVariables);
    const env: Record<string, string> = {
      ...IMAGE_ENV,
      ...composeEnv,
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      RESULT_DIR: resultDir,
    };
    return { port: await freePort(), composeEnv, env };
  }

  it("starts the API with the api service's environment, answers its healthchecks and stops cleanly on SIGTERM", async () => {
    const { port, composeEnv, env: runEnv } = await serviceRun("api");
    // The service's METRICS_PORT (the image's admin port), moved to a free one like PORT.
    expect(composeEnv.METRICS_PORT, "the api service serves metrics on an admin port").toBeDefined();
    const metricsPort = await freePort();
    const env = { ...runEnv, PORT: String(port), METRICS_PORT: String(metricsPort) };
    const api = start(process.execPath, [compiled(serviceCommand(service("api"))[1] ?? "")], env);
    try {
      await waitForOk(`http://127.0.0.1:${port}/healthz`, api);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      // the console's page and modules, copied beside the bundle by the build
      const consolePage = await fetch(`http://127.0.0.1:${port}/console`);
      expect(consolePage.status).toBe(200);
      const script = /<script[^>]+src="([^"]+)"/.exec(await consolePage.text())?.[1];
      expect(script).toBeDefined();
      const consoleScript = await fetch(`http://127.0.0.1:${port}${script}`);
      expect(consoleScript.status).toBe(200);
      expect(consoleScript.headers.get("content-type")).toContain("javascript");
      // read to its end: a body left unread holds its connection open after the API has gone
      expect((await consoleScript.text()).length).toBeGreaterThan(0);
      // the API reference's viewer, resolved at run time in node_modules (the image installs it)
      const docsPage = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(docsPage.status).toBe(200);
      const viewer = /<script[^>]+src="([^"]+)"/.exec(await docsPage.text())?.[1];
      expect(viewer).toMatch(/^\/docs\/assets\/scalar-api-reference-/);
      const viewerScript = await fetch(`http://127.0.0.1:${port}${viewer}`);
      expect(viewerScript.status).toBe(200);
      expect(viewerScript.headers.get("content-type")).toContain("javascript");
      expect((await viewerScript.text()).length).toBeGreaterThan(1_000);
      // one libuv thread per core for the argon2id runs, set by the entry itself
      expect(await libuvPoolThreads(port, api.child.pid!)).toBe(expectedThreadPool());
      // Metrics on the admin port only, never on the public one.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      const metricsText = await metrics.text();
      expect(metricsText).toContain("studyflow_http_requests_total");
      // the image's NODE_OPTIONS cap V8's young generation, which start-up would otherwise grow
      expect(newSpaceBytes(metricsText)).toBeLessThanOrEqual(CAPPED_NEW_SPACE_BYTES);

      // The compose healthcheck, aimed at this port, and the image's, which reads PORT.
      const [program = "", ...args] = healthcheckArgs("api");
      const composeProbe = await run(
        program === "node" ? process.execPath : program,
        args.map((arg) => arg.replace(`:${composeEnv.PORT}/`, `:${port}/`)),
        IMAGE_ENV,
      );
      expect(composeProbe.code, composeProbe.output).toBe(0);
      const [, ...imageArgs] = execForm((imageHealthcheck ?? "").slice((imageHealthcheck ?? "").indexOf("CMD") + 3));
      const imageProbe = await run(process.execPath, imageArgs, { ...IMAGE_ENV, PORT: String(port) });
      expect(imageProbe.code, imageProbe.output).toBe(0);

      const stopped = await stop(api);
      expect(stopped, stopped.output).toMatchObject({ code: 0, signal: null });
      // Within the API's SHUTDOWN_TIMEOUT_MS default (10 s), far inside the compose grace period.
      expect(stopped.ms).toBeLessThan(10_000);
      expect(stopped.output).toContain('"msg":"shutting down"');
    } finally {
      api.child.kill("SIGKILL");
    }
  });

  it("starts the worker with the worker service's environment, serves health and dashboard, stops cleanly on SIGTERM", async () => {
    const { port, composeEnv, env: runEnv } = await serviceRun("worker");
    const env = {
      ...runEnv,
      HEALTH_PORT: String(port),
      // No Mailpit here, and nothing to send from a fresh database.
      SMTP_URL: "smtp://127.0.0.1:1",
    };
    const worker = start(process.execPath, [compiled(serviceCommand(service("worker"))[1] ?? "")], env);
    try {
      await waitForOk(`http://127.0.0.1:${port}/healthz`, worker);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      const [program = "", ...args] = healthcheckArgs("worker");
      const probe = await run(
        program === "node" ? process.execPath : program,
        args.map((arg) => arg.replace(`:${composeEnv.HEALTH_PORT}/`, `:${port}/`)),
        IMAGE_ENV,
      );
      expect(probe.code, probe.output).toBe(0);

      // The dashboard, with its UI files served from node_modules (@bull-board/ui) next to the bundle.
      const authorization = `Basic ${Buffer.from(`${composeEnv.DASHBOARD_USER}:${composeEnv.DASHBOARD_PASSWORD}`).toString("base64")}`;
      const page = await fetch(`http://127.0.0.1:${port}/admin/queues`, { headers: { authorization } });
      expect(page.status).toBe(200);
      const html = await page.text();
      // Asset paths are relative to <base href="/admin/queues/">.
      const script = /<script[^>]* src="(static\/js\/main\.[^"]+\.js)"/.exec(html)?.[1];
      expect(script, html).toBeDefined();
      const asset = await fetch(`http://127.0.0.1:${port}/admin/queues/${script}`, { headers: { authorization } });
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(1_000);

      const stopped = await stop(worker);
      expect(stopped, stopped.output).toMatchObject({ code: 0, signal: null });
      // Within the worker's SHUTDOWN_TIMEOUT_MS default (20 s), inside the compose grace period.
      expect(stopped.ms).toBeLessThan(20_000);
      expect(stopped.output).toContain('"msg":"shutting down"');
    } finally {
      worker.child.kill("SIGKILL");
    }
  });
});
