/**
 * System calls per request, for the API load benchmark (api-bench.ts --syscalls): Linux's
 * syscall tracepoints counted by `perf stat` on the server process and on its PostgreSQL
 * backends while a load run lasts. On a virtual machine whose every system call traps to the
 * hypervisor (the machines these benches run on: 3–5 µs for a getpid), a request's system calls
 * are a large share of its CPU, so the count says where two servers' costs part. Needs `perf`
 * and read access to the tracepoints (root); without them the figures are absent.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";

/** Calls per request by system call name, largest first. */
export type SyscallCounts = Map<string, number>;

export interface SyscallCounter {
  /** Stops counting and returns the calls counted, per request. */
  stop(requests: number): Promise<SyscallCounts>;
}

let available: boolean | undefined;

/** Whether `perf stat` can count syscall tracepoints here. */
export function syscallCountingAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync("perf", ["stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "true"], {
      encoding: "utf8",
    });
    available = probe.status === 0 && /^\d+,/m.test(probe.stderr ?? "");
  }
  return available;
}

/** Starts counting the system calls of `pids` (all of their threads), summed. */
export function countSyscalls(pids: readonly number[]): SyscallCounter {
  if (pids.length === 0 || !syscallCountingAvailable()) {
    return { stop: () => Promise.resolve(new Map()) };
  }
  const perf: ChildProcess = spawn("perf", ["stat", "-x,", "-e", "syscalls:sys_enter_*", "-p", pids.join(",")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let output = "";
  perf.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => perf.once("close", () => resolve()));
  return {
    async stop(requests) {
      perf.kill("SIGINT");
      await exited;
      const counts: SyscallCounts = new Map();
      for (const line of output.split("\n")) {
        const [count, , event] = line.split(",");
        const name = event?.match(/^syscalls:sys_enter_(\w+)$/)?.[1];
        const calls = Number(count);
        if (name && Number.isFinite(calls) && calls > 0) counts.set(name, calls / Math.max(1, requests));
      }
      return new Map([...counts].sort((a, b) => b[1] - a[1]));
    },
  };
}

/** Total calls per request. */
const totalSyscalls = (counts: SyscallCounts) => [...counts.values()].reduce((sum, calls) => sum + calls, 0);

/** "12.3 (write 5.0, read 4.1, …)": the total and the largest few. */
export function describeSyscalls(counts: SyscallCounts, largest = 6): string {
  if (counts.size === 0) return "n/a";
  const top = [...counts]
    .slice(0, largest)
    .map(([name, calls]) => `${name} ${calls.toFixed(2)}`)
    .join(", ");
  return `${totalSyscalls(counts).toFixed(1)} (${top})`;
}
