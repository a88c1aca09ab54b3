import { availableParallelism } from "node:os";
import { z } from "zod";
import { parseEnv } from "./parse-env";

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
 * memory. An operator's own UV_THREADPOOL_SIZE (1 to 1024) is kept. Cores are
 * availableParallelism()'s, which counts a container's CPU quota (libuv 1.49 and later, so Node 24).
 */
export const MIN_THREAD_POOL = 2;
export const MAX_THREAD_POOL = 16;

export function defaultThreadPoolSize(cores: number): number {
  return Math.min(MAX_THREAD_POOL, Math.max(MIN_THREAD_POOL, cores));
}

/** UV_THREADPOOL_SIZE as an operator may set it; unset, the API sizes the pool itself. */
export const threadPoolSettings = {
  UV_THREADPOOL_SIZE: z.coerce.number().int().min(1).max(1024).optional(),
};

/** The pool the API runs with: the operator's size, else one thread per core. */
export function threadPoolSize(configured: number | undefined, cores = availableParallelism()): number {
  return configured ?? defaultThreadPoolSize(cores);
}

/**
 * For the API's entry, before it loads the API: parses UV_THREADPOOL_SIZE from `env`, the process's
 * environment as the API's config module reads it (a bad value is a ConfigError, as any setting's),
 * and sets there the size libuv will read when its pool starts. The rest of the API's configuration
 * is parsed later, by main.ts, whose imports start the pool (bullmq, among them, does).
 */
export function sizeThreadPool(env: Record<string, string | undefined>): number {
  const size = threadPoolSize(parseEnv(z.object(threadPoolSettings), env).UV_THREADPOOL_SIZE);
  env.UV_THREADPOOL_SIZE = String(size);
  return size;
}
