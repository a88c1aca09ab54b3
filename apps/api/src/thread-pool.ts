/**
 * Sizes libuv's thread pool (sizeThreadPool in @studyflow/config) before anything uses it: the
 * API's entry imports this module first. libuv reads UV_THREADPOOL_SIZE once, when the pool starts.
 * A process run as `node --import tsx` has started it while loading the sources, so the supervisor
 * also sets it in the API's environment (scripts/supervise.ts).
 */
import { loadConfigOrExit, sizeThreadPool } from "@studyflow/config";

loadConfigOrExit(() => sizeThreadPool());
