/**
 * The API's entry. It sizes libuv's thread pool (sizeThreadPool in @studyflow/config, from the
 * environment config.ts reads) before the API loads, then loads and starts the API (main.ts).
 * libuv reads UV_THREADPOOL_SIZE once, when its pool starts, and bullmq starts it as it loads: the
 * API's modules must not be imported before the setting. config.ts and what it imports start no
 * pool. The bundle keeps main.ts a file of its own (dist/api/main.js, esbuild.config.ts), whose
 * imports cannot be hoisted above this one's. A process run as `node --import tsx` has started the
 * pool while loading the sources, so the supervisor also sets the size in the API's environment
 * (scripts/supervise.ts).
 */
import { loadConfigOrExit, sizeThreadPool } from "@studyflow/config";
import { processEnv } from "./config";

loadConfigOrExit(() => sizeThreadPool(processEnv()));

// a name, not a literal, so the bundler leaves this import to run time (tsx finds main.ts)
const main = "./main.js";
await import(main);
