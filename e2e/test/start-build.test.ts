/**
 * `npm start` runs compiled JavaScript: its first step (scripts/ensure-build.ts) builds dist/ when
 * it is missing or stale and leaves it alone otherwise, and the rest runs the migrations, the
 * supervisor, the API and the worker from the bundles with plain `node`.
 *
 * The staleness check itself (checkBuild of esbuild.config.ts) is tested on a small tree of its
 * own; ensure-build on the real sources, built into a directory of the test's own; the start on
 * the checkout's dist/, as `npm start` runs it.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  createTestRedis,
  deletePrefix,
  freePort,
  testRedisUrl,
  uniqueQueuePrefix,
} from "@studyflow/testkit";
import {
  INLINED_PACKAGES,
  MANIFEST,
  OUT_DIR,
  START_ENTRIES,
  checkBuild,
  entriesOf,
  writeManifest,
} from "../../esbuild.config";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a command to its end without the test's NODE_OPTIONS and colours: its exit code and output. */
async function runToEnd(command: string, args: string[], cwd: string) {
  const { NODE_OPTIONS: _options, FORCE_COLOR: _colour, ...env } = process.env;
  const child = spawn(command, args, { cwd, env, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

describe("checkBuild: whether a build still matches what it was made from", () => {
  const entries = { "one/index": "src/a.ts", "two/index": "src/b.ts" };
  let root: string;
  let outDir: string;
  const file = (relative: string) => path.join(root, relative);
  /** An hour ago: long before the build below, as sources are. */
  const past = new Date(Date.now() - 3_600_000);

  async function writeTree(files: Record<string, string>): Promise<void> {
    for (const [relative, content] of Object.entries(files)) {
      await mkdir(path.dirname(file(relative)), { recursive: true });
      await writeFile(file(relative), content);
      await utimes(file(relative), past, past);
    }
  }

  /** A build of `entries` from the tree: its outputs and its manifest. */
  async function build(startedAt = Date.now()): Promise<void> {
    await mkdir(path.join(outDir, "one"), { recursive: true });
    await mkdir(path.join(outDir, "two"), { recursive: true });
    await writeFile(path.join(outDir, "one", "index.js"), "");
    await writeFile(path.join(outDir, "two", "index.js"), "");
    writeManifest(root, outDir, entries, ["src/a.ts", "src/b.ts", "migrations"], startedAt);
  }

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "sf-build-check-"));
    outDir = path.join(root, "dist");
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  afterEach(async () => {
    for (const entry of await readdir(root)) await rm(path.join(root, entry), { recursive: true, force: true });
  });

  beforeEach(async () => {
    await writeTree({
      "package.json": '{"workspaces":["src"]}',
      "package-lock.json": '{"lockfileVersion":3}',
      "src/a.ts": "export const a = 1;\n",
      "src/b.ts": "export const b = 2;\n",
      "migrations/0000_init.sql": "create table t (id int);\n",
      "migrations/meta/_journal.json": '{"entries":[0]}',
    });
    await build();
  });

  it("finds an unchanged tree fresh, every file the build read counted", () => {
    // a.ts, b.ts, the two migration files, package.json (a.ts's nearest) and the lockfile
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: true, files: 6 });
  });

  it("finds it stale once a source's content changed, even at the same size", async () => {
    await writeFile(file("src/a.ts"), "export const a = 9;\n");
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "src/a.ts changed" });
  });

  it("does not count a new time on the same content as a change, and stats the file only from then on", async () => {
    const now = new Date();
    await utimes(file("src/b.ts"), now, now);
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: true, files: 6 });
    const manifest = JSON.parse(await readFile(path.join(outDir, MANIFEST), "utf8")) as {
      files: Record<string, { mtimeMs: number }>;
    };
    expect(manifest.files["src/b.ts"]?.mtimeMs).toBe((await stat(file("src/b.ts"))).mtimeMs);
  });

  it("finds it stale when a source is removed, the lockfile or a workspace manifest changed", async () => {
    await rm(file("src/b.ts"));
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "src/b.ts was removed" });
    await writeTree({ "src/b.ts": "export const b = 2;\n" });
    expect(checkBuild(outDir, entries, root).fresh).toBe(true);

    await writeFile(file("package-lock.json"), '{"lockfileVersion":3,"packages":{}}');
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "package-lock.json changed" });
    await writeTree({ "package-lock.json": '{"lockfileVersion":3}' });

    await writeFile(file("package.json"), '{"workspaces":["src"],"type":"module"}');
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "package.json changed" });
  });

  it("finds it stale when a copied folder gained a file (a new migration)", async () => {
    await writeTree({ "migrations/0001_more.sql": "alter table t add column x int;\n" });
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "migrations has other files" });
  });

  it("finds it stale without its manifest or an output, or when other entries are wanted", async () => {
    expect(checkBuild(path.join(root, "nowhere"), entries, root)).toEqual({ fresh: false, reason: "not built yet" });
    expect(checkBuild(outDir, { ...entries, "three/index": "src/a.ts" }, root)).toEqual({
      fresh: false,
      reason: "built for other entries",
    });
    await rm(path.join(outDir, "two", "index.js"));
    expect(checkBuild(outDir, entries, root)).toEqual({ fresh: false, reason: "two/index.js is missing" });
    await rm(path.join(outDir, MANIFEST));
    expect(checkBuild(outDir, entries, root)).toEqual({
      fresh: false,
      reason: `${MANIFEST} is missing or unreadable`,
    });
  });

  it("builds again after a source changed while it was being built (either version may be in the bundle)", async () => {
    const startedAt = Date.now();
    await writeFile(file("src/a.ts"), "export const a = 3;\n");
    await build(startedAt);
    expect(checkBuild(outDir, entries, root)).toEqual({
      fresh: false,
      reason: "src/a.ts changed during the previous build",
    });
  });
});

describe("scripts/ensure-build.ts", () => {
  // A copy of what the build reads, so that edits elsewhere in the checkout do not reach it and the
  // test can edit a source. Outside node_modules (Node strips types only elsewhere), with a
  // node_modules of its own: esbuild and the inlined packages from the repository's, @studyflow/*
  // linked to the copy.
  let copyRoot = "";
  let outDir = "";
  const runEnsureBuild = async (...args: string[]) => {
    const { code, stdout, stderr } = await runToEnd(process.execPath, ["scripts/ensure-build.ts", ...args], copyRoot);
    expect(code, stdout + stderr).toBe(0);
    return { stdout, stderr };
  };
  const ensureBuild = async () => {
    const { stdout, stderr } = await runEnsureBuild();
    return stdout + stderr;
  };
  const bundleTime = async () => (await stat(path.join(outDir, "api", "index.js"))).mtimeMs;
  const upToDate = /^\[build\] dist is up to date \(\d+ files checked in \d+ ms\)$/m;

  beforeAll(async () => {
    copyRoot = await mkdtemp(path.join(tmpdir(), "sf-start-build-"));
    outDir = path.join(copyRoot, OUT_DIR);
    await mkdir(path.join(copyRoot, "node_modules"));
    // esbuild, and the packages the build inlines (it reads them as it reads the sources)
    for (const name of ["esbuild", ...INLINED_PACKAGES]) {
      await mkdir(path.join(copyRoot, "node_modules", path.dirname(name)), { recursive: true });
      await symlink(path.join(REPO_ROOT, "node_modules", name), path.join(copyRoot, "node_modules", name));
    }
    for (const file of ["esbuild.config.ts", "package.json", "package-lock.json", "tsconfig.json"]) {
      await cp(path.join(REPO_ROOT, file), path.join(copyRoot, file));
    }
    await cp(path.join(REPO_ROOT, "scripts"), path.join(copyRoot, "scripts"), { recursive: true });
    for (const group of ["apps", "packages"]) {
      for (const name of await readdir(path.join(REPO_ROOT, group))) {
        const from = path.join(REPO_ROOT, group, name);
        const to = path.join(copyRoot, group, name);
        if (!existsSync(path.join(from, "package.json"))) continue;
        await cp(path.join(from, "package.json"), path.join(to, "package.json"));
        for (const folder of ["src", "migrations"]) {
          if (existsSync(path.join(from, folder)))
            await cp(path.join(from, folder), path.join(to, folder), { recursive: true });
        }
        const { name: packageName } = JSON.parse(await readFile(path.join(from, "package.json"), "utf8")) as {
          name: string;
        };
        await mkdir(path.join(copyRoot, "node_modules", path.dirname(packageName)), { recursive: true });
        await symlink(to, path.join(copyRoot, "node_modules", packageName));
      }
    }
  });
  afterAll(() => rm(copyRoot, { recursive: true, force: true }));

  it("builds when there is no build, not again for an unchanged tree, and again once a source or the migrations changed", async () => {
    expect(await ensureBuild()).toContain("[build] building dist: not built yet");
    for (const name of Object.keys(entriesOf({ withSupervisor: true }))) {
      expect(existsSync(path.join(outDir, `${name}.js`)), name).toBe(true);
    }
    const built = await bundleTime();
    expect(await ensureBuild()).toMatch(upToDate);

    // A new time on the same content (a checkout, a touch) is not a change.
    const source = path.join(copyRoot, "apps", "api", "src", "index.ts");
    const now = new Date();
    await utimes(source, now, now);
    expect(await ensureBuild()).toMatch(upToDate);
    expect(await bundleTime()).toBe(built);

    await writeFile(source, `${await readFile(source, "utf8")}\nexport const editedByTheTest = true;\n`);
    expect(await ensureBuild()).toContain("[build] building dist: apps/api/src/index.ts changed");
    const rebuilt = await bundleTime();
    expect(rebuilt).toBeGreaterThan(built);
    expect(await readFile(path.join(outDir, "api", "index.js"), "utf8")).toContain("editedByTheTest");
    expect(await ensureBuild()).toMatch(upToDate);

    await writeFile(path.join(copyRoot, "packages", "db", "migrations", "9999_more.sql"), "select 1;\n");
    expect(await ensureBuild()).toContain("[build] building dist: packages/db/migrations has other files");
    expect(existsSync(path.join(outDir, "migrations", "9999_more.sql"))).toBe(true);
  }, 120_000);

  it("--quiet (the CLI's scripts) says nothing when up to date, and what a build says goes to stderr", async () => {
    await runEnsureBuild();
    expect(await runEnsureBuild("--quiet")).toEqual({ stdout: "", stderr: "" });
    const source = path.join(copyRoot, "apps", "cli", "src", "main.ts");
    await writeFile(source, `${await readFile(source, "utf8")}\nexport const quietlyEdited = true;\n`);
    const { stdout, stderr } = await runEnsureBuild("--quiet");
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^\[build\] building dist: apps\/cli\/src\/main\.ts changed\n\[build\] built \d+ entries/);
    expect(await readFile(path.join(outDir, "cli", "main.js"), "utf8")).toContain("quietlyEdited");
    expect(await runEnsureBuild("--quiet")).toEqual({ stdout: "", stderr: "" });
  }, 120_000);
});

describe("npm run cli", () => {
  /** `npm run -s cli -- args` from the checkout, as an operator types it. */
  const npmCli = (...args: string[]) => runToEnd("npm", ["run", "-s", "cli", "--", ...args], REPO_ROOT);

  it("runs the compiled CLI of an up-to-date dist/: stdout is the command's answer alone, exit codes are the CLI's", async () => {
    const help = await npmCli("help");
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^studyflow operator CLI\n/);
    expect(help.stdout).not.toContain("[build]");
    // dist/ is fresh now (built by the run above if it was not), and the answer is its CLI's.
    expect(checkBuild(path.join(REPO_ROOT, OUT_DIR), entriesOf({ withSupervisor: true })).fresh).toBe(true);
    const direct = await runToEnd(process.execPath, [path.join(OUT_DIR, "cli", "main.js"), "help"], REPO_ROOT);
    expect(direct.code).toBe(0);
    expect(help.stdout).toBe(direct.stdout);

    const unknown = await npmCli("no-such-command");
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain('error: unknown command "no-such-command"');
  }, 120_000);
});

describe("npm start", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it("runs the migrations, the supervisor, the API and the worker compiled with plain node; both answer /healthz", async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const prefix = uniqueQueuePrefix();
    cleanups.push(async () => {
      const redis = createTestRedis();
      try {
        await deletePrefix(redis, prefix);
      } finally {
        redis.disconnect();
      }
    });
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-start-build-"));
    cleanups.push(() => rm(resultDir, { recursive: true, force: true }));
    const apiPort = await freePort();
    let healthPort = await freePort();
    while (healthPort === apiPort) healthPort = await freePort();
    const { NODE_OPTIONS: _options, FORCE_COLOR: _colour, ...inherited } = process.env;
    const child = spawn("npm", ["start"], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...inherited,
        NODE_ENV: "test",
        LOG_LEVEL: "info",
        NO_COLOR: "1",
        DATABASE_URL: database.url,
        REDIS_URL: testRedisUrl,
        QUEUE_PREFIX: prefix,
        HOST: "127.0.0.1",
        PORT: String(apiPort),
        HEALTH_PORT: String(healthPort),
        RESULT_DIR: resultDir,
        SHUTDOWN_TIMEOUT_MS: "5000",
      },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const group = child.pid!;
    cleanups.push(() => {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // gone already
      }
      return Promise.resolve();
    });

    for (const url of [`http://127.0.0.1:${apiPort}/healthz`, `http://127.0.0.1:${healthPort}/healthz`]) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const status = await fetch(url, { signal: AbortSignal.timeout(1_000) })
          .then((response) => response.status)
          .catch(() => 0);
        if (status === 200) break;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${url} did not answer:\n${output}`);
        await sleep(100);
      }
    }

    const text = stripVTControlCharacters(output);
    expect(text).toMatch(/^\[build\] (dist is up to date|building dist: |dist was built meanwhile)/m);
    expect(text).toContain("migrations applied");
    // The group's node processes: the supervisor and its two apps, each a bundle of dist/ and nothing else.
    const commands: string[][] = [];
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const procStat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
      const [state, , pgrp] = procStat.slice(procStat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z" || Number(pgrp) !== group) continue;
      const args = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0").filter(Boolean);
      if (path.basename(args[0] ?? "") === "node") commands.push(args.slice(1));
    }
    const dist = path.join(REPO_ROOT, OUT_DIR);
    expect(commands.map((args) => args.map((arg) => path.relative(dist, path.resolve(REPO_ROOT, arg))))).toEqual(
      expect.arrayContaining([["api/index.js"], ["worker/index.js"], [`${Object.keys(START_ENTRIES)[0]}.js`]]),
    );
    expect(commands.flat().join(" ")).not.toContain("tsx");

    process.kill(-group, "SIGTERM");
    await exited;
    // Both apps ran their own shutdown and ended with 0.
    expect(stripVTControlCharacters(output)).toMatch(/^\[supervise\] stopped$/m);
  }, 120_000);
});
