import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestRedis, deletePrefix, uniqueQueuePrefix } from "@studyflow/testkit";
import { RateLimited } from "../src/errors";
import { createRedisRateLimiter, enforceRateLimits, type RateLimiter } from "../src/rate-limit/redis-rate-limiter";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe("redis rate limiter", () => {
  let redis: Redis;
  let prefix: string;
  let now: number;
  let limiter: RateLimiter;

  beforeAll(() => {
    redis = createTestRedis();
  });
  beforeEach(() => {
    // A fresh namespace and clock per test: no test sees another's buckets.
    prefix = uniqueQueuePrefix();
    now = T0;
    limiter = createRedisRateLimiter(redis, { prefix, clock: () => now });
  });
  afterEach(async () => {
    await deletePrefix(redis, prefix);
  });
  afterAll(() => {
    redis.disconnect();
  });

  it("allows up to the limit, then refuses with the wait until a slot frees", async () => {
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await limiter.hit("b", 3, 60));
    expect(decisions).toEqual([
      { allowed: true, remaining: 2, retryAfterSeconds: 0 },
      { allowed: true, remaining: 1, retryAfterSeconds: 0 },
      { allowed: true, remaining: 0, retryAfterSeconds: 0 },
    ]);
    now += 15_000;
    expect(await limiter.hit("b", 3, 60)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 45 });
  });

  it("slides: each attempt leaves the window exactly one window after it was made", async () => {
    await limiter.hit("b", 2, 60); // T0
    now = T0 + 30_000;
    await limiter.hit("b", 2, 60); // T0 + 30 s
    now = T0 + 59_999;
    expect((await limiter.hit("b", 2, 60)).retryAfterSeconds).toBe(1);
    now = T0 + 60_000; // the first attempt has left; the second is still in
    expect(await limiter.hit("b", 2, 60)).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
    now = T0 + 60_001;
    expect(await limiter.hit("b", 2, 60)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 30 });
    now = T0 + 90_000;
    expect((await limiter.hit("b", 2, 60)).allowed).toBe(true);
  });

  it("does not let a burst through around a window boundary", async () => {
    now = T0 + 59_000;
    for (let i = 0; i < 5; i++) expect((await limiter.hit("b", 5, 60)).allowed).toBe(true);
    now = T0 + 61_000; // a fixed one-minute window would have started afresh here
    expect((await limiter.hit("b", 5, 60)).allowed).toBe(false);
  });

  it("answers Retry-After of at least one second", async () => {
    await limiter.hit("b", 1, 1);
    now += 999;
    expect(await limiter.hit("b", 1, 1)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    now += 1;
    expect((await limiter.hit("b", 1, 1)).allowed).toBe(true);
  });

  it("peek tells without counting", async () => {
    expect(await limiter.peek("b", 2, 60)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
    expect(await limiter.peek("b", 2, 60)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
    await limiter.hit("b", 2, 60);
    expect(await limiter.peek("b", 2, 60)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 });
    await limiter.hit("b", 2, 60);
    now += 20_000;
    expect(await limiter.peek("b", 2, 60)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 40 });
    now += 40_000;
    expect(await limiter.peek("b", 2, 60)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
  });

  it("reset empties a bucket", async () => {
    await limiter.hit("b", 1, 60);
    expect((await limiter.hit("b", 1, 60)).allowed).toBe(false);
    await limiter.reset("b");
    expect(await limiter.hit("b", 1, 60)).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it("keeps buckets apart, under the prefix, with an expiry", async () => {
    await limiter.hit("one", 1, 60);
    expect((await limiter.hit("two", 1, 60)).allowed).toBe(true);
    expect((await limiter.hit("one", 1, 60)).allowed).toBe(false);
    const keys = (await redis.keys(`${prefix}:*`)).sort();
    expect(keys).toEqual([`${prefix}:ratelimit:one`, `${prefix}:ratelimit:two`]);
    const ttl = await redis.pttl(`${prefix}:ratelimit:one`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("never records more than the limit, however often it is hit", async () => {
    for (let i = 0; i < 50; i++) await limiter.hit("b", 3, 60);
    expect(await redis.zcard(`${prefix}:ratelimit:b`)).toBe(3);
  });

  it("admits exactly the limit among concurrent attempts, even within one millisecond", async () => {
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.hit("b", 7, 60)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 60)).toBe(true);
  });

  it("refuses nonsensical limits and windows", async () => {
    await expect(limiter.hit("b", 0, 60)).rejects.toThrow(RangeError);
    await expect(limiter.hit("b", 1.5, 60)).rejects.toThrow(RangeError);
    await expect(limiter.peek("b", 1, 0)).rejects.toThrow(RangeError);
  });

  it("enforceRateLimits throws RateLimited at the first full bucket and counts no later ones", async () => {
    const rules = [
      { bucket: "address", limit: 1, windowSeconds: 60 },
      { bucket: "token", limit: 5, windowSeconds: 60 },
    ];
    await enforceRateLimits(limiter, rules, "slow down");
    now += 10_000;
    const error = await enforceRateLimits(limiter, rules, "slow down").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimited);
    expect(error).toMatchObject({ message: "slow down", retryAfterSeconds: 50 });
    expect(await limiter.peek("token", 5, 60)).toMatchObject({ remaining: 4 });
  });
});
