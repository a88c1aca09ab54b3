/**
 * Worker processes for a benchmark: the worker's entry (apps/worker/src/index.ts) compiled as the
 * image runs it (compiled.ts; BENCH_SOURCES=tsx runs the sources), spawned as separate processes
 * against the bench's database and queue prefix, as a deployment runs them, with their peak memory
 * read from /proc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { withYoungGenerationCap } from "@studyflow/config";
import { freePort } from "@studyflow/testkit";
import { processArgs } from "./compiled";

/**
 * How long a worker may take to answer its health endpoint. Loading the worker's TypeScript through
 * tsx (BENCH_SOURCES=tsx) takes a second or two on a quiet machine and half a minute on a busy one;
 * a first job measured before that would count the start-up as export time.
 */
const START_TIMEOUT_MS = 120_000;

async function untilRunning(child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`a worker process exited at start with code ${child.exitCode}`);
    const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`a worker process did not start within ${START_TIMEOUT_MS / 1000} s`);
}

export interface WorkerProcess {
  child: ChildProcess;
  /** The process's peak resident set (VmHWM) in KiB since it started or since resetPeak. */
  peakRssKb: () => Promise<number>;
  /** Its resident set now (VmRSS) in KiB. */
  rssKb: () => Promise<number>;
  /**
   * Starts the peak over from the current resident set (writing 5 to /proc/<pid>/clear_refs), so
   * one process's peak can be read per measured phase. False where the kernel does not allow it.
   */
  resetPeak: () => Promise<boolean>;
}

export interface WorkerProcessOptions {
  count: number;
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  /** Anything else the workers' config wants (RESULT_DIR, tuning switches). */
  env?: Record<string, string>;
  /** A directory for a CPU profile of each worker (node --cpu-prof), written when it exits. */
  cpuProfileDir?: string | undefined;
}

export async function startWorkerProcesses(options: WorkerProcessOptions): Promise<WorkerProcess[]> {
  const profiling = options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const workerArgs = await processArgs("worker/index");
  const ports = await Promise.all(Array.from({ length: options.count }, () => freePort()));
  const workers = ports.map((port): WorkerProcess => {
    const child = spawn(process.execPath, [...profiling, ...workerArgs], {
      env: {
        ...process.env,
        NODE_ENV: "production",
        // as the image and npm start run the worker
        NODE_OPTIONS: withYoungGenerationCap(process.env.NODE_OPTIONS),
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        QUEUE_PREFIX: options.queuePrefix,
        WORKER_CONCURRENCY: "1",
        HEALTH_PORT: String(port),
        LOG_LEVEL: "warn",
        ...options.env,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const statusFile = `/proc/${child.pid}/status`;
    const readKb = async (field: "VmHWM" | "VmRSS") => {
      const status = await readFile(statusFile, "utf8").catch(() => "");
      return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    };
    return {
      child,
      peakRssKb: () => readKb("VmHWM"),
      rssKb: () => readKb("VmRSS"),
      resetPeak: () =>
        writeFile(`/proc/${child.pid}/clear_refs`, "5").then(
          () => true,
          () => false,
        ),
    };
  });
  try {
    await Promise.all(workers.map((worker, index) => untilRunning(worker.child, ports[index]!)));
  } catch (error) {
    await stopWorkerProcesses(workers);
    throw error;
  }
  return workers;
}

/** SIGTERM to each worker, resolved when all have exited (they finish their current batch first). */
export async function stopWorkerProcesses(workers: readonly WorkerProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}
