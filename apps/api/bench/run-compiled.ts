/**
 * Runs one of this folder's benches compiled by the production build (esbuild.config.ts,
 * buildForBench), as the image and `npm start` run the API, instead of from the sources through
 * tsx: tsx compiles every module with esbuild's keepNames, so each function a request creates is
 * also named at run time, work the shipped bundle does not do. libuv's thread pool is sized in the
 * bench's environment as the API's entry sizes it (one thread per core): in one bundle the packages
 * it imports load before any of its own code runs, and bullmq starts the pool as it loads.
 *
 *   tsx bench/run-compiled.ts sign-in-bench      (what `npm run bench -w @studyflow/api` runs)
 *   BENCH_SOURCES=tsx tsx bench/run-compiled.ts sign-in-bench   the same from the sources
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sizeThreadPool, withYoungGenerationCap } from "@studyflow/config";
import { buildForBench } from "../../../esbuild.config";

const bench = process.argv[2] ?? "";
const source = path.join(path.dirname(fileURLToPath(import.meta.url)), `${bench}.ts`);
if (!/^[a-z-]+$/.test(bench) || !existsSync(source)) {
  console.error(`usage: run-compiled.ts <bench>, a file of ${path.dirname(source)} without .ts`);
  process.exit(2);
}
const env = { ...process.env };
sizeThreadPool(env);
// V8's young generation as the image and npm start cap it for the API
env.NODE_OPTIONS = withYoungGenerationCap(env.NODE_OPTIONS);
let script: string[];
if (env.BENCH_SOURCES === "tsx") {
  script = ["--import", "tsx", source];
} else {
  const name = `bench/${bench}`;
  script = [(await buildForBench({ [name]: path.relative(path.resolve(source, "../../../.."), source) }))(name)];
}
const run = spawnSync(process.execPath, [...script, ...process.argv.slice(3)], { stdio: "inherit", env });
process.exitCode = run.status ?? 1;
