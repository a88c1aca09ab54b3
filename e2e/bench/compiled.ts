/**
 * How a bench starts the product's processes (the API server, the workers, the CLI): compiled by the
 * production build (esbuild.config.ts, buildForBench), as the image and `npm start` run them, or
 * from their TypeScript sources through tsx when BENCH_SOURCES=tsx. tsx compiles every module with
 * esbuild's keepNames, so each function a request creates is also named at run time (`__name`), work
 * the shipped bundle does not do; a CPU profile of a compiled process, though, names the bundle as
 * the file of every function of the project's own, where one from the sources names each source.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildForBench } from "../../esbuild.config";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The benches' own entries, built beside the product's. */
const BENCH_ENTRIES = {
  "bench/api-bench-server": "e2e/bench/api-bench-server.ts",
} as const;

/** The compiled processes a bench starts, with the source each is built from. */
const SOURCES = {
  ...BENCH_ENTRIES,
  "worker/index": "apps/worker/src/index.ts",
  "cli/main": "apps/cli/src/main.ts",
} as const;

export type BenchProcess = keyof typeof SOURCES;

export const fromSources = process.env.BENCH_SOURCES === "tsx";

let built: Promise<(name: string) => string> | undefined;

/** node's arguments that run `name` (before the process's own arguments). Builds once per bench. */
export async function processArgs(name: BenchProcess): Promise<string[]> {
  if (fromSources) return ["--import", "tsx", path.join(ROOT, SOURCES[name])];
  built ??= buildForBench(BENCH_ENTRIES);
  return [(await built)(name)];
}

/** "compiled" or "sources (tsx)": for the bench's heading. */
export const processKind = (): string => (fromSources ? "sources through tsx" : "compiled (the production build)");
