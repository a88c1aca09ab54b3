/**
 * `npm start` stopped the way operators' tools stop it: a signal to its whole process group
 * (systemd, `timeout`, a closing terminal, Ctrl-C, a CI runner), and its supervisor
 * (scripts/supervise.ts) restarting an app that dies on its own. Each test starts the real scripts
 * in a process group of their own, against a database, queue prefix and ports of its own, and
 * reads how the processes ended from the group (/proc), the ports and the prefixed output.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { expectedThreadPool, libuvPoolThreads } from "./thread-pool-probe";
import { CAPPED_NEW_SPACE_BYTES, newSpaceBytes } from "./young-generation-probe";
import {
  createTestDatabase,
  createTestRedis,
  deletePrefix,
  freePort,
  testRedisUrl,
  uniqueQueuePrefix,
  waitForHttpOk,
} from "@studyflow/testkit";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * `npm start` checks the build first (and rebuilds dist/ when a source is newer), the supervisor's own
 * tests start it from TypeScript through tsx; two cores shared with other tests.
 */
const START_TIMEOUT_MS = 60_000;
/** What the brief of a stop allows: both apps stopped and every process of the group gone. */
const STOP_WITHIN_MS = 20_000;

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Group {
  /** The process group (= the leader's pid: started detached). */
  pgid: number;
  /** stdout and stderr so far, without colours. */
  output: () => string;
  /** How the group's leader (npm, or the supervisor itself) ended. */
  leaderEnded: Promise<Ended>;
  /** Resolves when every process that held the output pipes has closed them. */
  outputClosed: Promise<void>;
  /** Resolves once a line of the output matches; fails after `timeoutMs`. */
  waitForLine: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
}

interface Member {
  pid: number;
  args: string;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  const pending = cleanups.splice(0).reverse();
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

/** Starts `program` as the leader of a new process group (and session), as a terminal or systemd would. */
function startGroup(program: string, args: string[], env: NodeJS.ProcessEnv): Group {
  const child = spawn(program, args, { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error(`${program} did not start`);
  let output = "";
  const append = (chunk: Buffer) => (output += chunk.toString("utf8"));
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  cleanups.push(async () => {
    for (const { pid } of await groupMembers(pgid)) process.kill(pid, "SIGKILL");
  });
  const leaderEnded = new Promise<Ended>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const outputClosed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const text = () => stripVTControlCharacters(output);
  return {
    pgid,
    output: text,
    leaderEnded,
    outputClosed,
    waitForLine: async (pattern, timeoutMs = START_TIMEOUT_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (
        !text()
          .split("\n")
          .some((line) => pattern.test(line))
      ) {
        if (Date.now() > deadline) throw new Error(`no line matched ${pattern} within ${timeoutMs} ms:\n${text()}`);
        await sleep(100);
      }
    },
  };
}

/** The live processes of a process group, from /proc (zombies hold nothing and are left out). */
async function groupMembers(pgid: number): Promise<Member[]> {
  const members: Member[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
    if (stat === undefined) continue;
    // After "(comm)": state, ppid, pgrp, …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z" || Number(pgrp) !== pgid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    members.push({ pid: Number(entry), args: cmdline.split("\0").join(" ").trim() });
  }
  return members;
}

/** Polls until the group has no live process; returns what is left after `timeoutMs`. */
async function waitForGroupEnd(pgid: number, timeoutMs = STOP_WITHIN_MS): Promise<Member[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const members = await groupMembers(pgid);
    if (members.length === 0 || Date.now() > deadline) return members;
    await sleep(100);
  }
}

/** The app process running `entry` in the group (its node, not the esbuild helpers beside it). */
async function appProcess(pgid: number, entry: string): Promise<Member> {
  const found = (await groupMembers(pgid)).filter(({ args }) => args.endsWith(entry));
  expect(found, `one process runs ${entry}`).toHaveLength(1);
  return found[0]!;
}

/** Whether a listen on `port` (all interfaces, so it meets any bound address) succeeds. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

function waitForOk(url: string, group: Group): Promise<void> {
  return waitForHttpOk(url, {
    gone: async () =>
      (await groupMembers(group.pgid)).length === 0 ? `the group ended:\n${group.output()}` : undefined,
    output: group.output,
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 200,
  });
}

/** The JSON log records an app wrote (NODE_ENV=test logs JSON), from its `[name] ` lines. */
function logsOf(output: string, name: string): { msg?: string; signal?: string }[] {
  const prefix = `[${name}] {`;
  return output
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .map((line) => JSON.parse(line.slice(prefix.length - 1)) as { msg?: string; signal?: string });
}

interface Setup {
  env: NodeJS.ProcessEnv;
  apiPort: number;
  healthPort: number;
}

/** A database, a queue prefix, a result directory and two free ports of the test's own. */
async function setUp(extra: Record<string, string> = {}): Promise<Setup> {
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
  const resultDir = await mkdtemp(path.join(tmpdir(), "sf-start-signals-"));
  cleanups.push(() => rm(resultDir, { recursive: true, force: true }));
  const apiPort = await freePort();
  let healthPort = await freePort();
  while (healthPort === apiPort) healthPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl,
    QUEUE_PREFIX: prefix,
    HOST: "127.0.0.1",
    PORT: String(apiPort),
    HEALTH_PORT: String(healthPort),
    RESULT_DIR: resultDir,
    // The apps' own shutdown budget: nothing runs, so they need far less; bounded all the same.
    SHUTDOWN_TIMEOUT_MS: "5000",
    NO_COLOR: "1",
    ...extra,
  };
  delete env.FORCE_COLOR;
  // the API sizes its libuv pool itself unless this is set
  delete env.UV_THREADPOOL_SIZE;
  // the supervisor adds the young generation's cap to node's options unless they set one
  delete env.NODE_OPTIONS;
  return { env, apiPort, healthPort };
}

async function waitForBoth(group: Group, { apiPort, healthPort }: Setup): Promise<void> {
  await waitForOk(`http://127.0.0.1:${apiPort}/healthz`, group);
  await waitForOk(`http://127.0.0.1:${healthPort}/healthz`, group);
}

/** Every process of the group gone within the limit, both ports free again. */
async function expectAllGone(group: Group, { apiPort, healthPort }: Setup): Promise<void> {
  const left = await waitForGroupEnd(group.pgid);
  expect(left, group.output()).toEqual([]);
  await group.outputClosed;
  expect(await portIsFree(apiPort), `api port ${apiPort}`).toBe(true);
  expect(await portIsFree(healthPort), `worker health port ${healthPort}`).toBe(true);
}

const supervisor = (setup: Setup) =>
  startGroup(process.execPath, ["--import", "tsx", "scripts/supervise.ts"], setup.env);

describe("npm start, stopped by a signal to its process group", () => {
  const cases: { signal: NodeJS.Signals; twice?: boolean; as: string }[] = [
    { signal: "SIGTERM", as: "systemd, timeout, a CI runner" },
    { signal: "SIGINT", twice: true, as: "Ctrl-C pressed twice" },
    { signal: "SIGHUP", as: "a closing terminal" },
  ];
  for (const { signal, twice, as } of cases) {
    it(`${signal} (${as}): both apps shut down gracefully, nothing restarts, nothing is left`, async () => {
      const setup = await setUp();
      const group = startGroup("npm", ["start"], setup.env);
      await waitForBoth(group, setup);

      const sentAt = Date.now();
      process.kill(-group.pgid, signal);
      if (twice) {
        await sleep(200);
        // The group may be gone already: that is fine too.
        try {
          process.kill(-group.pgid, signal);
        } catch (error) {
          expect((error as NodeJS.ErrnoException).code).toBe("ESRCH");
        }
      }
      await expectAllGone(group, setup);
      expect(Date.now() - sentAt).toBeLessThan(STOP_WITHIN_MS);

      const output = group.output();
      expect(output).toContain("migrations applied");
      expect(output).toMatch(new RegExp(`^\\[supervise\\] ${signal}: stopping api and worker$`, "m"));
      for (const name of ["api", "worker"]) {
        // The app's own shutdown ran (on the group's signal or the supervisor's SIGTERM), and it
        // ended by itself with 0, not by the signal.
        const shutdowns = logsOf(output, name).filter(({ msg }) => msg === "shutting down");
        expect(shutdowns.length, `${name}:\n${output}`).toBeGreaterThanOrEqual(1);
        expect([signal, "SIGTERM"]).toContain(shutdowns[0]!.signal);
        expect(output).toContain(`[supervise] ${name} stopped (exited with code 0)`);
      }
      expect(output).not.toContain("restarting");
      expect(output).toMatch(/^\[supervise\] stopped$/m);
      expect(output).not.toContain("not cleanly");
    }, 120_000);
  }
});

describe("the supervisor", () => {
  it("restarts an app that ends on its own (killed, or told to stop alone); a signal to the group then stops both, exit 0", async () => {
    const setup = await setUp();
    const group = supervisor(setup);
    await waitForBoth(group, setup);
    const api = await appProcess(group.pgid, "apps/api/src/index.ts");
    const worker = await appProcess(group.pgid, "apps/worker/src/index.ts");
    // one libuv thread per core: under --import tsx the pool has started before the API's own
    // setting, so this is the supervisor's
    expect(await libuvPoolThreads(setup.apiPort, api.pid)).toBe(expectedThreadPool());
    // both apps cap V8's young generation, which their start-up would otherwise grow
    for (const port of [setup.apiPort, setup.healthPort]) {
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status, `/metrics on ${port}`).toBe(200);
      expect(newSpaceBytes(await metrics.text()), `/metrics on ${port}`).toBeLessThanOrEqual(CAPPED_NEW_SPACE_BYTES);
    }

    // At once (one restart period, not two): a crash, the API killed outright; and a SIGTERM to
    // the worker alone, which is not a stop of the whole: it shuts down and is started again.
    process.kill(api.pid, "SIGKILL");
    process.kill(worker.pid, "SIGTERM");
    await group.waitForLine(/^\[supervise\] api was killed by SIGKILL; restarting it in 1 s$/, 10_000);
    await group.waitForLine(/^\[supervise\] worker exited with code 0; restarting it in 1 s$/, 10_000);
    await waitForBoth(group, setup);
    expect((await appProcess(group.pgid, "apps/api/src/index.ts")).pid).not.toBe(api.pid);
    expect((await appProcess(group.pgid, "apps/worker/src/index.ts")).pid).not.toBe(worker.pid);
    // Each was started once more, and the worker ran its own shutdown before.
    expect(group.output().match(/restarting/g)).toHaveLength(2);
    expect(logsOf(group.output(), "worker").filter(({ msg }) => msg === "shutting down")).toHaveLength(1);

    process.kill(-group.pgid, "SIGTERM");
    await expectAllGone(group, setup);
    expect(await group.leaderEnded).toEqual({ code: 0, signal: null });
    const output = group.output();
    expect(output.match(/restarting/g)).toHaveLength(2);
    expect(logsOf(output, "api").filter(({ msg }) => msg === "api listening")).toHaveLength(2);
    expect(output).toContain("[supervise] api stopped (exited with code 0)");
    expect(output).toContain("[supervise] worker stopped (exited with code 0)");
    expect(output).toMatch(/^\[supervise\] stopped$/m);
  }, 180_000);

  it("kills an app that does not stop within SUPERVISOR_STOP_TIMEOUT_MS and exits 1", async () => {
    const setup = await setUp({ SUPERVISOR_STOP_TIMEOUT_MS: "2000" });
    const group = supervisor(setup);
    await waitForBoth(group, setup);
    // An API that cannot react: stopped, so the SIGTERM stays pending.
    const api = await appProcess(group.pgid, "apps/api/src/index.ts");
    process.kill(api.pid, "SIGSTOP");

    process.kill(-group.pgid, "SIGTERM");
    await expectAllGone(group, setup);
    expect(await group.leaderEnded).toEqual({ code: 1, signal: null });
    const output = group.output();
    expect(output).toContain("[supervise] api still runs after 2 s: killing it");
    expect(output).toContain("[supervise] api stopped (killed by SIGKILL)");
    expect(output).toContain("[supervise] worker stopped (exited with code 0)");
    expect(output).toMatch(/^\[supervise\] stopped, not cleanly$/m);
    expect(output).not.toContain("restarting");
  }, 120_000);

  it("refuses a bad SUPERVISOR_STOP_TIMEOUT_MS before starting anything", async () => {
    const setup = await setUp({ SUPERVISOR_STOP_TIMEOUT_MS: "soon" });
    const group = supervisor(setup);
    expect(await group.leaderEnded).toEqual({ code: 1, signal: null });
    await group.outputClosed;
    expect(group.output()).toContain("SUPERVISOR_STOP_TIMEOUT_MS");
    expect(group.output()).not.toContain("[api]");
    expect(await waitForGroupEnd(group.pgid, 5_000)).toEqual([]);
  });
});
