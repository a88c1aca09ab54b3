/**
 * CPU time as Linux's /proc reports it, for the benches that print where a run's CPU went.
 * Elsewhere (or for a process that is gone), what cannot be read is NaN.
 */
import { readFileSync } from "node:fs";

/** Linux's USER_HZ: the unit of /proc's CPU times, 100 on every common kernel configuration. */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) in a /proc `stat` file: a process's, or one thread's. */
export function statCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** CPU milliseconds a process has used, all its threads. */
export const processCpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`);

/** Busy and total jiffies of the whole machine (idle and iowait are not busy). */
export function machineTicks(): { busy: number; total: number } {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((sum, value) => sum + value, 0);
    return { busy: total - cpu[3]! - (cpu[4] ?? 0), total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}
