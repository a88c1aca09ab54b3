/**
 * The process manager of `npm start`, `npm run demo:up` and `npm run dev`: it runs the API and one
 * worker with their output prefixed `[api]` / `[worker]`, restarts either when it ends on its own,
 * and stops both gracefully when it is told to stop.
 *
 * Why hand-written: `npm start` used concurrently, which cannot tell "crashed" from "told to stop".
 * A SIGTERM to the whole process group (what systemd, `timeout`, a closing terminal or a CI runner
 * send) reaches the apps directly; they exit, and concurrently, configured to restart crashed
 * children, restarted them while exiting itself: orphans holding the ports until SIGKILL. The one
 * thing needed, a restart policy that knows whether a stop is under way, is no option of
 * concurrently's, and managers that have it (pm2) bring a daemon and a process model of their own;
 * with node:child_process it is this one file. The image does not use it: there each service is one
 * `node` process under tini, and compose restarts it.
 *
 * Rules:
 * - A child that ends on its own (a crash, any exit code, a signal the supervisor did not send) is
 *   restarted after a pause that doubles from 1 s up to 30 s, and is back to 1 s after a run of a
 *   minute.
 * - SIGTERM, SIGINT or SIGHUP to the supervisor is a stop: one SIGTERM to each child, which then runs
 *   its own shutdown (the API closes its server and connections, the worker hands running chunk
 *   jobs back); nothing is restarted after that, and the supervisor exits once both children have
 *   ended: 0 if both stopped cleanly, 1 otherwise. A further signal changes nothing. Whatever still
 *   runs after SUPERVISOR_STOP_TIMEOUT_MS gets SIGKILL, and the exit code is 1.
 * - The children stay in the supervisor's process group, so a signal to the group reaches them as
 *   well: they stop on it, and the supervisor, which got it too, counts their exits as the stop.
 *   A child that ends a moment before the supervisor's own signal is handled is only due for a
 *   restart after its pause, which the stop cancels.
 *
 * It runs the apps the way it runs itself. Started from this file through tsx (`npm run dev`), it
 * runs apps/api/src/index.ts and apps/worker/src/index.ts through tsx. Started as its bundle,
 * dist/supervise/index.js (`npm start` and `npm run demo:up`, which build dist/ first, see
 * scripts/ensure-build.ts), it runs the bundles beside it, dist/api/index.js and
 * dist/worker/index.js, with plain `node`, as the image does. Either way the apps run from the
 * repository root.
 *
 * `--watch` (`npm run dev`): each child runs under `node --watch`, which restarts it when one of its
 * sources changes (with SIGTERM first, so through the same graceful shutdown) and, after a crash,
 * waits for the next change rather than exiting. It watches sources, so the bundle refuses it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs, styleText } from "node:util";
import { z } from "zod";
import {
  loadConfigOrExit,
  milliseconds,
  parseEnv,
  threadPoolSettings,
  threadPoolSize,
  withYoungGenerationCap,
} from "@studyflow/config";

/**
 * This script as node was given it: scripts/supervise.ts, or its bundle dist/supervise/index.js.
 * Not import.meta.url, which the build cannot carry into a bundle (see esbuild.config.ts).
 */
const SELF = path.resolve(process.argv[1] ?? "");
const COMPILED = SELF.endsWith(".js");
/** scripts/.. from the sources; dist/supervise/../.. from the bundle (dist/ lies in the repository). */
const REPO_ROOT = path.resolve(path.dirname(SELF), COMPILED ? "../.." : "..");

const schema = z.object({
  /**
   * The apps' own shutdown budget (running jobs, in-flight requests); read here only to size the
   * stop deadline. Its default is the worker's, the longer of the two.
   */
  SHUTDOWN_TIMEOUT_MS: milliseconds(20_000),
  /**
   * How long a stop may take before the children still running are killed. Default:
   * SHUTDOWN_TIMEOUT_MS plus 5 s, for the worker's database and Redis disconnects after its jobs
   * have been handed back (25 s with the defaults).
   */
  SUPERVISOR_STOP_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  /** Colour choices, passed on to the children (see below). */
  FORCE_COLOR: z.string().optional(),
  NO_COLOR: z.string().optional(),
  /** The API's libuv pool, passed on to it (see below); unset, one thread per core. */
  ...threadPoolSettings,
  /** node's options for both apps, with V8's young generation capped unless they cap it (see below). */
  NODE_OPTIONS: z.string().optional(),
});

const STOP_MARGIN_MS = 5_000;
/** First pause before a restart: a single crash is back at once, a crash loop (database down) does not spin. */
const FIRST_RESTART_DELAY_MS = 1_000;
/** Longest pause between restarts: a dependency that comes back is noticed within half a minute. */
const MAX_RESTART_DELAY_MS = 30_000;
/** A run at least this long was healthy: the next crash is restarted after the first pause again. */
const HEALTHY_RUN_MS = 60_000;

const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

interface App {
  name: string;
  /** How node runs it: its source through tsx, or its bundle beside the supervisor's own. */
  args: string[];
  /** Its environment beyond the supervisor's own. */
  env?: NodeJS.ProcessEnv;
  colour: "cyan" | "magenta";
}

const config = loadConfigOrExit(() => parseEnv(schema, process.env));

/** The bundle of an app (`api/index`), beside the supervisor's own (dist/supervise/index.js). */
const bundle = (name: string) => path.resolve(path.dirname(SELF), "..", `${name}.js`);

const APPS: readonly App[] = [
  {
    name: "api",
    args: COMPILED ? [bundle("api/index")] : ["--import", "tsx", "apps/api/src/index.ts"],
    // the API sets it itself, too late under --import tsx, whose loading starts the pool
    env: { UV_THREADPOOL_SIZE: String(threadPoolSize(config.UV_THREADPOOL_SIZE)) },
    colour: "cyan",
  },
  {
    name: "worker",
    args: COMPILED ? [bundle("worker/index")] : ["--import", "tsx", "apps/worker/src/index.ts"],
    colour: "magenta",
  },
];

interface Supervised extends App {
  process: ChildProcess | undefined;
  startedAt: number;
  /** Restarts since the last healthy run: the exponent of the pause. */
  restarts: number;
  restartTimer: NodeJS.Timeout | undefined;
  /** How it ended during the stop: clean means exit code 0, or one of the stop signals. */
  stoppedCleanly: boolean | undefined;
}

const { values: options } = parseArgs({ options: { watch: { type: "boolean", default: false } } });
if (options.watch && COMPILED) {
  process.stderr.write("--watch restarts the apps when their sources change: run the sources (npm run dev)\n");
  process.exit(1);
}
const stopTimeoutMs = config.SUPERVISOR_STOP_TIMEOUT_MS ?? config.SHUTDOWN_TIMEOUT_MS + STOP_MARGIN_MS;

// The children write into pipes, so they would turn their colours off; keep them when ours are on.
// Both apps cap V8's young generation (packages/config/src/young-generation.ts), as the image's
// NODE_OPTIONS does: left to V8 it grows with the machine's memory during start-up and stays.
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  ...(config.FORCE_COLOR === undefined && config.NO_COLOR === undefined && process.stdout.hasColors?.()
    ? { FORCE_COLOR: "1" }
    : {}),
  NODE_OPTIONS: withYoungGenerationCap(config.NODE_OPTIONS),
};

// A closed terminal (SIGHUP) makes writes fail: the stop must still be seen through.
process.stdout.on("error", () => undefined);
process.stderr.on("error", () => undefined);

function say(message: string): void {
  process.stdout.write(`${styleText("bold", "[supervise]", { stream: process.stdout })} ${message}\n`);
}

/** Copies each line of `from` to `to`, prefixed with the child's coloured name. */
function prefixLines(app: App, from: NodeJS.ReadableStream, to: NodeJS.WriteStream): void {
  const prefix = styleText(app.colour, `[${app.name}]`, { stream: to });
  createInterface({ input: from, crlfDelay: Infinity }).on("line", (line) => to.write(`${prefix} ${line}\n`));
}

const children: Supervised[] = APPS.map((app) => ({
  ...app,
  process: undefined,
  startedAt: 0,
  restarts: 0,
  restartTimer: undefined,
  stoppedCleanly: undefined,
}));
let stopping: { signal: NodeJS.Signals; deadline: NodeJS.Timeout; forced: boolean } | undefined;

function start(child: Supervised): void {
  const args = [...(options.watch ? ["--watch", "--watch-preserve-output"] : []), ...child.args];
  const env = { ...childEnv, ...child.env };
  const started = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  child.process = started;
  child.startedAt = Date.now();
  prefixLines(child, started.stdout, process.stdout);
  prefixLines(child, started.stderr, process.stderr);
  let ended = false;
  const end = (code: number | null, signal: NodeJS.Signals | null) => {
    if (ended) return;
    ended = true;
    child.process = undefined;
    onEnd(child, code, signal);
  };
  // "close" rather than "exit": the child's last lines are copied before its end is reported.
  started.on("close", end);
  started.on("error", (error) => {
    say(`${child.name}: ${error.message}`);
    // Not started at all: no "close" follows.
    if (started.pid === undefined) end(null, null);
  });
}

function describeEnd(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  return code === null ? "could not be started" : `exited with code ${code}`;
}

function onEnd(child: Supervised, code: number | null, signal: NodeJS.Signals | null): void {
  if (stopping) {
    child.stoppedCleanly = code === 0 || (signal !== null && (STOP_SIGNALS as readonly string[]).includes(signal));
    say(`${child.name} stopped (${describeEnd(code, signal).replace(/^was /, "")})`);
    finishIfDone();
    return;
  }
  if (Date.now() - child.startedAt >= HEALTHY_RUN_MS) child.restarts = 0;
  const delay = Math.min(FIRST_RESTART_DELAY_MS * 2 ** child.restarts, MAX_RESTART_DELAY_MS);
  child.restarts += 1;
  say(`${child.name} ${describeEnd(code, signal)}; restarting it in ${delay / 1000} s`);
  child.restartTimer = setTimeout(() => {
    child.restartTimer = undefined;
    start(child);
  }, delay);
}

function stop(signal: NodeJS.Signals): void {
  if (stopping) {
    say(`${signal} again: still stopping (SIGKILL after ${stopTimeoutMs / 1000} s)`);
    return;
  }
  const deadline = setTimeout(() => {
    if (!stopping) return;
    stopping.forced = true;
    for (const child of children) {
      if (!child.process) continue;
      say(`${child.name} still runs after ${stopTimeoutMs / 1000} s: killing it`);
      child.process.kill("SIGKILL");
    }
  }, stopTimeoutMs);
  stopping = { signal, deadline, forced: false };
  say(`${signal}: stopping api and worker`);
  for (const child of children) {
    if (child.restartTimer) {
      clearTimeout(child.restartTimer);
      child.restartTimer = undefined;
      child.stoppedCleanly = true;
    }
    child.process?.kill("SIGTERM");
  }
  finishIfDone();
}

function finishIfDone(): void {
  if (!stopping || children.some((child) => child.process)) return;
  clearTimeout(stopping.deadline);
  const clean = !stopping.forced && children.every((child) => child.stoppedCleanly);
  say(clean ? "stopped" : "stopped, not cleanly");
  // Nothing else keeps the process alive: it exits once the output is written.
  process.exitCode = clean ? 0 : 1;
}

for (const signal of STOP_SIGNALS) process.on(signal, () => stop(signal));
for (const child of children) start(child);
