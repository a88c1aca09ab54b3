/**
 * The API's first configuration: sizes libuv's thread pool (sizeThreadPool in @studyflow/config)
 * from the environment before anything uses the pool. The API's entry imports this module first;
 * its other settings come later (config.ts), as loading them starts the pool. libuv reads
 * UV_THREADPOOL_SIZE once, when the pool starts. A process run as `node --import tsx` has started
 * it while loading the sources, so the supervisor also sets it in the API's environment
 * (scripts/supervise.ts).
 */
import { loadConfigOrExit, sizeThreadPool } from "@studyflow/config";

loadConfigOrExit(() => sizeThreadPool(process.env));
