/**
 * Idle processes of `npm start` (issue 37): the start script as it was (the migrations, the
 * supervisor, the API and the worker from the TypeScript sources through tsx) against the start
 * script of package.json now (the build check, then the esbuild bundles with plain `node`), each
 * run as npm runs it (`sh -c`), against a migrated database, queue prefix and ports of the bench's
 * own. For each way and round it times the start from the spawn until the API's and the worker's
 * /healthz answer, waits a few idle seconds, and reads VmRSS of the supervisor, the API and the
 * worker from /proc. Prints the medians and after ÷ before.
 *
 * Both apps now cap V8's young generation (packages/config/src/young-generation.ts), wherever the
 * supervisor runs them from. "before" is given the size V8 picks on this machine by itself
 * (NODE_OPTIONS=--max-semi-space-size=<V8's own>, found by a probe that grows a process's young
 * generation), as the old start script had it. A third way is printed for information: the compiled
 * start with V8's own size, which shows what the cap alone saves.
 *
 * A warm-up round comes first and is not counted: it fills tsx's cache of compiled files, as any
 * earlier run of the sources has, and builds dist/ if it is stale.
 *
 *   npm run bench:idle -w e2e -- [--rounds 3] [--idle-seconds 5]
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runMigrations } from "@studyflow/db";
import { createTestRedis, deletePrefix, freePort, testRedisUrl, uniqueQueuePrefix } from "@studyflow/testkit";
import { recordBenchFigure } from "@studyflow/testkit/bench-summary";
import { createBenchDatabase } from "./bench-database";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The root `start` script before issue 37. */
const START_FROM_SOURCES = "npm run -s db:migrate && exec node --import tsx scripts/supervise.ts";
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;
const APPS = ["api", "worker"] as const;
type AppName = (typeof APPS)[number];

interface Way {
  label: string;
  script: string;
  nodeOptions?: string;
}

interface Sample {
  /** From the spawn of the start script until the app's /healthz answered, ms. */
  ready: Record<AppName, number>;
  /** VmRSS after the idle seconds, KiB. */
  rssKb: Record<AppName | "supervisor", number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

/** The live children of `pid`, with their command lines. */
async function childrenOf(pid: number): Promise<{ pid: number; args: string }[]> {
  const found: { pid: number; args: string }[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z" || Number(ppid) !== pid) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ");
    found.push({ pid: Number(entry), args });
  }
  return found;
}

const appOf = (args: string): AppName | undefined =>
  /(^|\/)api\/(src\/)?index\.[jt]s\b/.test(args)
    ? "api"
    : /(^|\/)worker\/(src\/)?index\.[jt]s\b/.test(args)
      ? "worker"
      : undefined;

async function isOk(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
  await response?.body?.cancel();
  return response?.status === 200;
}

/** One start of a way: until both apps answer, idle, read the resident sets, stop. */
async function startOnce(
  way: Way,
  base: Record<string, string>,
  idleMs: number,
): Promise<Sample & { buildLine: string | undefined }> {
  const apiPort = await freePort();
  let healthPort = await freePort();
  while (healthPort === apiPort) healthPort = await freePort();
  const env = {
    ...base,
    PORT: String(apiPort),
    HEALTH_PORT: String(healthPort),
    ...(way.nodeOptions ? { NODE_OPTIONS: way.nodeOptions } : {}),
  };
  const spawnedAt = performance.now();
  // exec hands the shell's process to the supervisor, so its pid is the supervisor's.
  const child = spawn("sh", ["-c", way.script], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-20_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let exited = false;
  const ended = new Promise<void>((resolve) =>
    child.on("close", () => {
      exited = true;
      resolve();
    }),
  );
  const pid = child.pid!;
  try {
    const urls: Record<AppName, string> = {
      api: `http://127.0.0.1:${apiPort}/healthz`,
      worker: `http://127.0.0.1:${healthPort}/healthz`,
    };
    const ready: Partial<Record<AppName, number>> = {};
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (APPS.some((app) => ready[app] === undefined)) {
      if (exited) throw new Error(`${way.label}: the start script ended:\n${output}`);
      if (Date.now() > deadline) throw new Error(`${way.label}: not ready within ${START_TIMEOUT_MS} ms:\n${output}`);
      await Promise.all(
        APPS.filter((app) => ready[app] === undefined).map(async (app) => {
          if (await isOk(urls[app])) ready[app] = performance.now() - spawnedAt;
        }),
      );
      await sleep(25);
    }
    await sleep(idleMs);
    const rss: Partial<Sample["rssKb"]> = { supervisor: await rssKb(pid) };
    for (const { pid: childPid, args } of await childrenOf(pid)) {
      const app = appOf(args);
      if (app !== undefined) rss[app] = await rssKb(childPid);
    }
    for (const app of APPS) if (rss[app] === undefined) throw new Error(`${way.label}: no ${app} process found`);
    const buildLine = /^\[build\] .*$/m.exec(output)?.[0];
    return { ready: ready as Sample["ready"], rssKb: rss as Sample["rssKb"], buildLine };
  } finally {
    process.kill(-pid, "SIGTERM");
    const stopped = await Promise.race([ended.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
    if (!stopped) process.kill(-pid, "SIGKILL");
  }
}

const mb = (kb: number) => kb / 1024;
const format = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "—";

const semiSpaceOption = (mb: number) => `--max-semi-space-size=${mb}`;

/**
 * The semi-space V8 gives a process on this machine when nothing caps it, in MB: a node that keeps
 * two million small objects grows its young generation to the largest size V8 allows it (two
 * semi-spaces).
 */
function v8OwnSemiSpaceMb(): number {
  const script =
    "const keep = []; for (let i = 0; i < 2e6; i++) keep.push({ i }); " +
    "const space = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space'); " +
    "process.stdout.write(String(space.space_size / 2 / 1048576));";
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const probe = spawnSync(process.execPath, ["-e", script], { env, encoding: "utf8" });
  if (probe.status !== 0) throw new Error(`the young generation probe failed: ${probe.stderr}`);
  return Number(probe.stdout);
}

async function main() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      "idle-seconds": { type: "string", default: "5" },
    },
  });
  const rounds = Number(values.rounds);
  const idleMs = Number(values["idle-seconds"]) * 1_000;
  const ownSemiSpace = v8OwnSemiSpaceMb();
  const packageJson = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  const ways: Way[] = [
    { label: "before (sources, tsx)", script: START_FROM_SOURCES, nodeOptions: semiSpaceOption(ownSemiSpace) },
    { label: "after (compiled)", script: packageJson.scripts.start },
    {
      label: `compiled, V8's own semi-space (${ownSemiSpace} MB)`,
      script: packageJson.scripts.start,
      nodeOptions: semiSpaceOption(ownSemiSpace),
    },
  ];

  const database = await createBenchDatabase("sf_bench_idle");
  const prefix = uniqueQueuePrefix();
  const resultDir = await mkdtemp(path.join(tmpdir(), "sf-idle-bench-"));
  try {
    await runMigrations(database.url);
    const base: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && key !== "NODE_OPTIONS" && key !== "FORCE_COLOR") base[key] = value;
    }
    Object.assign(base, {
      // JSON logs, as in production; the development secrets.
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      NO_COLOR: "1",
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: prefix,
      HOST: "127.0.0.1",
      RESULT_DIR: resultDir,
      SHUTDOWN_TIMEOUT_MS: "5000",
    });
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
        `Node ${process.version}; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    console.log(`${rounds} rounds after a warm-up, ${idleMs / 1000} s idle before reading VmRSS; medians`);
    for (const way of ways)
      console.log(`  ${way.label}: ${way.nodeOptions ? `NODE_OPTIONS=${way.nodeOptions} ` : ""}${way.script}`);

    const samples = new Map<Way, Sample[]>(ways.map((way) => [way, []]));
    /** Measured compiled starts that built dist/ (a source changed since the previous start). */
    const rebuilds: string[] = [];
    for (let round = 0; round <= rounds; round++) {
      for (const way of ways) {
        const sample = await startOnce(way, base, round === 0 ? 1_000 : idleMs);
        if (round === 0 && sample.buildLine !== undefined) console.log(`  warm-up: ${sample.buildLine}`);
        if (round === 0) continue;
        samples.get(way)!.push(sample);
        if (sample.buildLine?.startsWith("[build] building")) rebuilds.push(`${way.label}: ${sample.buildLine}`);
      }
      process.stdout.write(round === 0 ? "  warm-up done\n" : `  round ${round} done\n`);
    }
    // A build in a measured start counts its seconds into the ready times of that start.
    console.log(
      `  measured starts that built dist/: ${rebuilds.length}${rebuilds.map((line) => `\n    ${line}`).join("")}`,
    );

    const rows: { label: string; unit: string; digits: number; of: (sample: Sample) => number }[] = [
      { label: "api ready", unit: "ms", digits: 0, of: (sample) => sample.ready.api },
      { label: "worker ready", unit: "ms", digits: 0, of: (sample) => sample.ready.worker },
      { label: "both ready", unit: "ms", digits: 0, of: (sample) => Math.max(sample.ready.api, sample.ready.worker) },
      { label: "supervisor idle RSS", unit: "MB", digits: 0, of: (sample) => mb(sample.rssKb.supervisor) },
      { label: "api idle RSS", unit: "MB", digits: 0, of: (sample) => mb(sample.rssKb.api) },
      { label: "worker idle RSS", unit: "MB", digits: 0, of: (sample) => mb(sample.rssKb.worker) },
      {
        label: "all three RSS",
        unit: "MB",
        digits: 0,
        of: (sample) => mb(sample.rssKb.supervisor + sample.rssKb.api + sample.rssKb.worker),
      },
    ];
    const [before, after, uncapped] = ways as [Way, Way, Way];
    const header = ["", "before", "after", "after ÷ before", `compiled, ${ownSemiSpace} MB`, "÷ before"];
    const table = rows.map(({ label, unit, digits, of }) => {
      const value = (way: Way) => median(samples.get(way)!.map(of));
      return [
        `${label} (${unit})`,
        format(value(before), digits),
        format(value(after), digits),
        format(value(after) / value(before), 2),
        format(value(uncapped), digits),
        format(value(uncapped) / value(before), 2),
      ];
    });
    // issue 37: `npm start` runs the compiled build, so its processes start faster and idle smaller
    for (const { label, unit, digits, of } of rows.filter((row) => /^(api|worker) (ready|idle RSS)$/.test(row.label))) {
      const value = (way: Way) => median(samples.get(way)!.map(of));
      recordBenchFigure({
        bench: "idle",
        figure: `${label}, \`npm start\` (compiled) against the sources through tsx`,
        target: "below the sources'",
        result: `${format(value(after), digits)} against ${format(value(before), digits)} ${unit} (${format(value(after) / value(before), 2)}×)`,
        met: value(after) < value(before),
      });
    }
    const widths = header.map((_, column) => Math.max(...[header, ...table].map((row) => row[column]!.length)));
    for (const row of [header, ...table]) {
      console.log(
        row.map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!))).join("  "),
      );
    }
    console.log(
      `load average at the end ${loadavg()
        .map((load) => load.toFixed(2))
        .join(", ")}`,
    );
  } finally {
    await rm(resultDir, { recursive: true, force: true });
    const redis = createTestRedis();
    try {
      await deletePrefix(redis, prefix);
    } finally {
      redis.disconnect();
    }
    await database.drop();
  }
}

await main();
