/**
 * Where the CPU of a load run goes, for the API load benchmark (api-bench.ts): the server
 * process's, its PostgreSQL backends' (found by the pool's application_name), the load
 * generator's (this process) and the whole machine's busy share, read from Linux's /proc. On two
 * shared cores a request's throughput is bounded by the CPU all of these spend on it, so the
 * figures say which side a difference between two servers comes from. Elsewhere (no /proc, or the
 * database on another machine) the figures it cannot read are NaN.
 */
import type postgres from "postgres";
import { machineTicks, processCpuMs } from "@studyflow/testkit";

/** application_name of each server's pool (api-bench-server.ts): its backends are found by it. */
export const STUDYFLOW_APPLICATION_NAME = "studyflow-bench";
export const BARE_APPLICATION_NAME = "studyflow-bench-bare";

export interface CpuSnapshot {
  serverMs: number;
  databaseMs: Map<number, number>;
  benchMs: number;
  machine: { busy: number; total: number };
}

/** CPU per request of one run, in microseconds, and the machine's busy share. */
export interface CpuPerRequest {
  server: number;
  database: number;
  loadGenerator: number;
  /** 0–1: the share of all cores busy during the run (every process on the machine). */
  machineBusy: number;
}

/**
 * Reads the CPU of a server process and of the PostgreSQL backends whose application_name is
 * `applicationName` (the server's pool), through `sql` (a connection of its own).
 */
export function cpuMeter(sql: postgres.Sql) {
  async function snapshot(serverPid: number | undefined, applicationName: string | undefined): Promise<CpuSnapshot> {
    const databaseMs = new Map<number, number>();
    if (applicationName !== undefined) {
      const backends = await sql<{ pid: number }[]>`
        select pid from pg_stat_activity where application_name = ${applicationName}`;
      for (const { pid } of backends) databaseMs.set(pid, processCpuMs(pid));
    }
    const own = process.cpuUsage();
    return {
      serverMs: serverPid === undefined ? NaN : processCpuMs(serverPid),
      databaseMs,
      benchMs: (own.user + own.system) / 1000,
      machine: machineTicks(),
    };
  }

  function perRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuPerRequest {
    const us = (ms: number) => (ms * 1000) / Math.max(1, requests);
    let database = 0;
    // a backend opened during the run started from zero; one closed during it is not counted
    for (const [pid, ms] of after.databaseMs) database += ms - (before.databaseMs.get(pid) ?? 0);
    if (after.databaseMs.size === 0) database = NaN;
    return {
      server: us(after.serverMs - before.serverMs),
      database: us(database),
      loadGenerator: us(after.benchMs - before.benchMs),
      machineBusy: (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total),
    };
  }

  return { snapshot, perRequest };
}
