/**
 * The API's entry. It sizes libuv's thread pool (thread-pool-config.ts) before anything else runs, then
 * loads and starts the API (main.ts). libuv reads UV_THREADPOOL_SIZE once, when its pool starts,
 * and bullmq starts it as it loads: the API's modules must not be imported before the setting.
 * The bundle keeps main.ts a file of its own (dist/api/main.js, esbuild.config.ts), whose imports
 * cannot be hoisted above this one's.
 */
import "./thread-pool-config";

// a name, not a literal, so the bundler leaves this import to run time (tsx finds main.ts)
const main = "./main.js";
await import(main);
