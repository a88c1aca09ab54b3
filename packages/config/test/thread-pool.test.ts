import { describe, expect, it } from "vitest";
import { MAX_THREAD_POOL, MIN_THREAD_POOL, defaultThreadPoolSize, threadPoolEnv } from "../src/thread-pool";

describe("the API's libuv thread pool (UV_THREADPOOL_SIZE)", () => {
  it("is one thread per core, at least two and at most sixteen", () => {
    expect([1, 2, 3, 8, 16, 17, 64].map(defaultThreadPoolSize)).toEqual([2, 2, 3, 8, 16, 16, 16]);
    expect([MIN_THREAD_POOL, MAX_THREAD_POOL]).toEqual([2, 16]);
  });

  it("keeps an operator's own setting, and fills in an unset or blank one", () => {
    expect(threadPoolEnv({ UV_THREADPOOL_SIZE: "7" }, 2)).toBe("7");
    expect(threadPoolEnv({}, 2)).toBe("2");
    expect(threadPoolEnv({ UV_THREADPOOL_SIZE: " " }, 6)).toBe("6");
    expect(threadPoolEnv({}, 40)).toBe("16");
  });
});
