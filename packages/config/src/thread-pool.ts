import { availableParallelism } from "node:os";

/**
 * libuv's thread pool for the API: one thread per core. The pool runs argon2id (every sign-in,
 * sign-up and password change), and each run fills a core and works through 19 MiB. libuv's default
 * of 4 threads ran four at once on a two-core machine, where they evicted each other's memory, and
 * the main thread's, from the caches at every switch: a verification cost 10.8–11.0 ms of CPU against
 * 8.4–8.5 ms with one per core, which gave 20–31 % more raw verifications per second and 24–36 % more
 * sign-ins (docs/benchmarks.md). A queued run starts on a freed thread at once; a gate in JavaScript
 * left a core idle until the event loop came round, and gained nothing.
 *
 * Two at least, so that file reads, DNS look-ups and zlib on a one-core machine do not wait behind
 * every argon2 run; 16 at most, so that a burst of sign-ins holds at most about 300 MiB of argon2
 * memory. An operator's own UV_THREADPOOL_SIZE is kept. Cores are availableParallelism()'s, which
 * counts a container's CPU quota (libuv 1.49 and later, so Node 24).
 */
export const MIN_THREAD_POOL = 2;
export const MAX_THREAD_POOL = 16;

export function defaultThreadPoolSize(cores: number): number {
  return Math.min(MAX_THREAD_POOL, Math.max(MIN_THREAD_POOL, cores));
}

/** UV_THREADPOOL_SIZE as the API runs with it: the operator's, else one thread per core. */
export function threadPoolEnv(env: Record<string, string | undefined>, cores = availableParallelism()): string {
  const set = env.UV_THREADPOOL_SIZE;
  return set !== undefined && set.trim() !== "" ? set : String(defaultThreadPoolSize(cores));
}
