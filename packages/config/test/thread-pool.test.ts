import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/parse-env";
import {
  MAX_THREAD_POOL,
  MIN_THREAD_POOL,
  defaultThreadPoolSize,
  sizeThreadPool,
  threadPoolSize,
} from "../src/thread-pool";

describe("the API's libuv thread pool (UV_THREADPOOL_SIZE)", () => {
  it("is one thread per core, at least two and at most sixteen", () => {
    expect([1, 2, 3, 8, 16, 17, 64].map(defaultThreadPoolSize)).toEqual([2, 2, 3, 8, 16, 16, 16]);
    expect([MIN_THREAD_POOL, MAX_THREAD_POOL]).toEqual([2, 16]);
    expect(threadPoolSize(undefined, 40)).toBe(16);
  });

  it("keeps an operator's own size, and fills in an unset one", () => {
    expect(threadPoolSize(7, 2)).toBe(7);
    const operators: Record<string, string | undefined> = { UV_THREADPOOL_SIZE: "7" };
    expect(sizeThreadPool(operators)).toBe(7);
    expect(operators.UV_THREADPOOL_SIZE).toBe("7");
    const unset: Record<string, string | undefined> = {};
    expect(sizeThreadPool(unset)).toBe(threadPoolSize(undefined));
    expect(unset.UV_THREADPOOL_SIZE).toBe(String(threadPoolSize(undefined)));
  });

  it("refuses a size that is not a whole number from 1 to 1024, or empty, naming the variable", () => {
    for (const bad of ["0", "1025", "2.5", "many", " "]) {
      const env: Record<string, string | undefined> = { UV_THREADPOOL_SIZE: bad };
      expect(() => sizeThreadPool(env)).toThrow(ConfigError);
      expect(() => sizeThreadPool(env)).toThrow(/UV_THREADPOOL_SIZE/);
      // left as it was: libuv never sees a size studyflow refused
      expect(env.UV_THREADPOOL_SIZE).toBe(bad);
    }
  });
});
