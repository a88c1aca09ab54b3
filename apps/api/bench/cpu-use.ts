/**
 * Where a bench's CPU goes, read from Linux's /proc: this process's threads (the main thread, the
 * libuv pool, V8's and the rest), the PostgreSQL backends of a pool (found by its
 * application_name), the Redis server (its INFO, which counts every client's work), and the whole
 * machine's busy share. Elsewhere, what cannot be read is NaN.
 */
import { readFileSync, readdirSync } from "node:fs";
import type { Redis } from "ioredis";
import type { DbHandle } from "@studyflow/db";
import { machineTicks, statCpuMs } from "@studyflow/testkit";

/** This process's CPU by thread kind: the main thread, libuv's pool (`libuv-worker`), the rest. */
function ownThreads(): { main: number; pool: number; other: number } {
  const totals = { main: 0, pool: 0, other: 0 };
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return { main: NaN, pool: NaN, other: NaN };
  }
  for (const tid of tasks) {
    const ms = statCpuMs(`/proc/self/task/${tid}/stat`);
    if (Number.isNaN(ms)) continue;
    if (Number(tid) === process.pid) totals.main += ms;
    else if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "libuv-worker") totals.pool += ms;
    else totals.other += ms;
  }
  return totals;
}

async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? NaN);
  return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1000;
}

interface Snapshot {
  threads: { main: number; pool: number; other: number };
  database: Map<number, number>;
  redis: number;
  machine: { busy: number; total: number };
}

/** Milliseconds of CPU per operation over a measured stretch, and the machine's busy share (0–1). */
export interface CpuPerOperation {
  mainThread: number;
  pool: number;
  otherThreads: number;
  database: number;
  redis: number;
  machineBusy: number;
}

/**
 * Measures stretches of work: `start()` before, `stop(operations)` after. `sql` (a connection of
 * its own) finds the backends whose application_name is `applicationName`.
 */
export function cpuUse(sql: DbHandle["sql"], applicationName: string, redis: Redis) {
  async function snapshot(): Promise<Snapshot> {
    const backends = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where application_name = ${applicationName}`;
    const database = new Map(backends.map(({ pid }) => [pid, statCpuMs(`/proc/${pid}/stat`)] as const));
    return { threads: ownThreads(), database, redis: await redisCpuMs(redis), machine: machineTicks() };
  }
  return {
    start: snapshot,
    async stop(before: Snapshot, operations: number): Promise<CpuPerOperation> {
      const after = await snapshot();
      const per = (ms: number) => ms / Math.max(1, operations);
      let database = after.database.size === 0 ? NaN : 0;
      // a backend opened during the stretch started from zero
      for (const [pid, ms] of after.database) database += ms - (before.database.get(pid) ?? 0);
      return {
        mainThread: per(after.threads.main - before.threads.main),
        pool: per(after.threads.pool - before.threads.pool),
        otherThreads: per(after.threads.other - before.threads.other),
        database: per(database),
        redis: per(after.redis - before.redis),
        machineBusy: (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total),
      };
    },
  };
}
