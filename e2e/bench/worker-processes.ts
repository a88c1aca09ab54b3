/**
 * Worker processes for a benchmark: the worker package's own entry (`@studyflow/worker/main`)
 * spawned as separate processes against the bench's database and queue prefix, as a deployment
 * runs them, with their peak memory read from /proc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** The worker process entry, found through the worker package's exports. */
const workerEntry = fileURLToPath(import.meta.resolve("@studyflow/worker/main"));

/** A worker needs a moment to connect to Redis and Postgres before its first job. */
const START_GRACE_MS = 1_500;

export interface WorkerProcess {
  child: ChildProcess;
  /** The process's peak resident set (VmHWM) in KiB since it started or since resetPeak. */
  peakRssKb: () => Promise<number>;
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
  const workers = Array.from({ length: options.count }, (): WorkerProcess => {
    const child = spawn(process.execPath, [...profiling, "--import", "tsx", workerEntry], {
      env: {
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        QUEUE_PREFIX: options.queuePrefix,
        WORKER_CONCURRENCY: "1",
        HEALTH_PORT: "0",
        LOG_LEVEL: "warn",
        ...options.env,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const statusFile = `/proc/${child.pid}/status`;
    return {
      child,
      peakRssKb: async () => {
        const status = await readFile(statusFile, "utf8").catch(() => "");
        return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      },
      resetPeak: () =>
        writeFile(`/proc/${child.pid}/clear_refs`, "5").then(
          () => true,
          () => false,
        ),
    };
  });
  await new Promise((resolve) => setTimeout(resolve, START_GRACE_MS));
  const exited = workers.find((worker) => worker.child.exitCode !== null);
  if (exited) throw new Error(`a worker process exited at start with code ${exited.child.exitCode}`);
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
