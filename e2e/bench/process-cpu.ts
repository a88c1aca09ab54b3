/**
 * CPU time spent during a measured span by the bench database's PostgreSQL backends, by the worker
 * processes and by the bench process itself (the API server and the polling), read from
 * /proc/<pid>/schedstat (nanoseconds on the CPU). On a machine that other work keeps busy, the
 * wall-clock ratio to a floor varies from round to round; the CPU each part spent varies less, and
 * shows where a run's time went.
 */
import { readFile } from "node:fs/promises";
import type { DbHandle } from "@studyflow/db";

/** Nanoseconds a process has run on a CPU; 0 once it is gone (or where /proc cannot be read). */
async function cpuNs(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/schedstat`, "utf8").catch(() => "");
  return Number(text.split(" ")[0] ?? 0) || 0;
}

export interface CpuSpan {
  /** The database's backends (every connection to it: workers', the API's, the bench's, the floor's). */
  postgresMs: number;
  /** Of which the backends of the worker processes' connections (application_name studyflow-worker). */
  workerBackendsMs: number;
  workersMs: number;
  /** This process: the API server and the bench's polling. */
  benchMs: number;
}

interface CpuSnapshot {
  backends: Map<number, number>;
  workerBackends: Set<number>;
  workers: Map<number, number>;
  bench: NodeJS.CpuUsage;
}

async function snapshot(db: DbHandle, workerPids: readonly number[]): Promise<CpuSnapshot> {
  const rows = await db.sql<{ pid: number; application_name: string }[]>`
    select pid, application_name from pg_stat_activity where datname = current_database()`;
  const read = async (pids: readonly number[]) =>
    new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuNs(pid)] as const)));
  return {
    backends: await read(rows.map((row) => row.pid)),
    workerBackends: new Set(rows.filter((row) => row.application_name === "studyflow-worker").map((row) => row.pid)),
    workers: await read(workerPids),
    bench: process.cpuUsage(),
  };
}

/**
 * Starts measuring; the function it returns ends the span and gives the CPU spent in it. A backend
 * that connected during the span counts from its start; one that ended during it is not counted
 * (connections here are pooled and outlive a span).
 */
export async function measureCpu(db: DbHandle, workerPids: readonly number[]): Promise<() => Promise<CpuSpan>> {
  const before = await snapshot(db, workerPids);
  return async () => {
    const bench = process.cpuUsage(before.bench);
    const after = await snapshot(db, workerPids);
    const spent = (now: Map<number, number>, then: Map<number, number>, only?: Set<number>) =>
      [...now]
        .filter(([pid]) => !only || only.has(pid))
        .reduce((sum, [pid, ns]) => sum + Math.max(0, ns - (then.get(pid) ?? 0)), 0) / 1e6;
    return {
      postgresMs: spent(after.backends, before.backends),
      workerBackendsMs: spent(after.backends, before.backends, after.workerBackends),
      workersMs: spent(after.workers, before.workers),
      benchMs: (bench.user + bench.system) / 1000,
    };
  };
}
