/**
 * `npm run bench`: every workspace's bench (the engine's, the API's, then e2e's), then one table of
 * the figures they recorded (packages/testkit/src/bench-summary.ts): each figure with its target,
 * its floor and whether it met it.
 *
 *   npm run bench                           one run
 *   npm run bench -- --runs 3               three runs one after the other, a column per run
 *   npm run bench -- --workspace e2e        one workspace's benches (repeatable; by default every
 *                                           workspace that has a bench script)
 *   npm run bench -- --cases tenth          any other argument goes to every workspace's bench, as
 *                                           before this script (e2e's run-actions bench reads it)
 *
 * The table is also saved as bench-summary-<time>.md in the system's temporary directory, so a
 * long run's result survives a closed terminal (the recorded figures themselves are removed). The exit status is the
 * benches' (non-zero when any bench failed), whatever the figures.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  BENCH_SUMMARY_ENV,
  benchSummaryTable,
  readBenchFigures,
  type BenchFigure,
} from "../packages/testkit/src/bench-summary";

/** `--runs N` and `--workspace W` (or `--x=…`) are this script's; every other argument is passed on. */
function splitArguments(args: readonly string[]): { runs: string; workspaces: string[]; passed: string[] } {
  let runs = "1";
  const workspaces: string[] = [];
  const passed: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--runs") runs = args[++i] ?? "";
    else if (arg.startsWith("--runs=")) runs = arg.slice("--runs=".length);
    else if (arg === "--workspace") workspaces.push(args[++i] ?? "");
    else if (arg.startsWith("--workspace=")) workspaces.push(arg.slice("--workspace=".length));
    else passed.push(arg);
  }
  return { runs, workspaces, passed };
}

const split = splitArguments(process.argv.slice(2));
const runs = Number(split.runs);
if (!/^\d+$/.test(split.runs) || runs < 1 || runs > 10) {
  console.error(`--runs takes a whole number from 1 to 10, not "${split.runs}"`);
  process.exit(2);
}
if (split.workspaces.some((name) => name === "")) {
  console.error("--workspace takes a workspace's name or folder, e.g. e2e or @studyflow/api");
  process.exit(2);
}
const selection =
  split.workspaces.length > 0 ? split.workspaces.flatMap((name) => ["--workspace", name]) : ["--workspaces"];

const directory = await mkdtemp(path.join(tmpdir(), "sf-bench-summary-"));
const figures: BenchFigure[][] = [];
let failed = false;
try {
  for (let run = 1; run <= runs; run++) {
    if (runs > 1) console.log(`\n======== run ${run} of ${runs} ========\n`);
    const file = path.join(directory, `run-${run}.jsonl`);
    const child = spawn("npm", ["run", "bench", ...selection, "--if-present", "--", ...split.passed], {
      stdio: "inherit",
      env: { ...process.env, [BENCH_SUMMARY_ENV]: file },
    });
    const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    if (code !== 0 || signal) failed = true;
    figures.push(readBenchFigures(file));
    // stopped from outside: the table of what ran, no further runs
    if (signal) break;
  }
  const table = benchSummaryTable(figures);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const saved = path.join(tmpdir(), `bench-summary-${stamp}.md`);
  await writeFile(saved, table + "\n");
  console.log(`\n## Summary${runs > 1 ? ` of ${runs} runs` : ""} (also in ${saved})\n\n${table}`);
  if (failed) console.log("\nAt least one bench failed; its figures are missing above.");
} finally {
  await rm(directory, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
