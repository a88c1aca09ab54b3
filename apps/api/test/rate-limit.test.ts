import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { Hono, type MiddlewareHandler } from "hono";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RateLimited } from "@studyflow/domain/errors";
import { createTestRedis, deletePrefix, uniqueQueuePrefix } from "@studyflow/testkit";
import type { AppEnv } from "../src/app-env";
import { handleError } from "../src/errors";
import { createRedisRateLimiter, rateLimit, type RateLimiter } from "../src/rate-limit";
import { validationHook } from "../src/validation";
import { createTestApp } from "./test-app";

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
    await expect(
      limiter.decideAll(
        [
          { bucket: "a", limit: 1, windowSeconds: 60 },
          { bucket: "b", limit: 0, windowSeconds: 60 },
        ],
        true,
      ),
    ).rejects.toThrow(RangeError);
    // nothing of a refused batch was counted
    expect(await redis.exists(`${prefix}:ratelimit:a`)).toBe(0);
  });

  it("decideAll answers each bucket as hit or peek one after another would, a bucket named twice counting twice", async () => {
    await limiter.hit("full", 1, 60);
    now += 20_000;
    const counted = await limiter.decideAll(
      [
        { bucket: "x", limit: 2, windowSeconds: 60 },
        { bucket: "full", limit: 1, windowSeconds: 60 },
        { bucket: "x", limit: 2, windowSeconds: 60 },
        { bucket: "x", limit: 2, windowSeconds: 60 },
      ],
      true,
    );
    expect(counted).toEqual([
      { allowed: true, remaining: 1, retryAfterSeconds: 0 },
      { allowed: false, remaining: 0, retryAfterSeconds: 40 },
      { allowed: true, remaining: 0, retryAfterSeconds: 0 },
      { allowed: false, remaining: 0, retryAfterSeconds: 60 },
    ]);
    expect(await redis.zcard(`${prefix}:ratelimit:x`)).toBe(2);
    // a peek counts nothing
    const peeked = await limiter.decideAll([{ bucket: "y", limit: 1, windowSeconds: 60 }], false);
    expect(peeked).toEqual([{ allowed: true, remaining: 1, retryAfterSeconds: 0 }]);
    expect(await redis.exists(`${prefix}:ratelimit:y`)).toBe(0);
  });

  it("decideAll after Redis forgot its scripts: sent again once, each bucket counted once", async () => {
    await limiter.decideAll([{ bucket: "warm", limit: 5, windowSeconds: 60 }], true);
    await redis.script("FLUSH");
    const decisions = await limiter.decideAll(
      [
        { bucket: "a", limit: 5, windowSeconds: 60 },
        { bucket: "b", limit: 5, windowSeconds: 60 },
      ],
      true,
    );
    expect(decisions.map((d) => d.remaining)).toEqual([4, 4]);
    expect(await redis.zcard(`${prefix}:ratelimit:a`)).toBe(1);
    expect(await redis.zcard(`${prefix}:ratelimit:b`)).toBe(1);
  });

  /** An app whose one route sits behind `limits`, answering `status`; `refusal` is the last error thrown. */
  function limitedApp(limits: MiddlewareHandler<AppEnv>[], status: 200 | 404 | 409 | 403 = 200) {
    const app = new Hono<AppEnv>();
    const seen: { refusal?: unknown; handled: number } = { handled: 0 };
    app.use("/", ...limits);
    app.post("/", (c) => {
      seen.handled += 1;
      return c.json({}, status);
    });
    app.onError((error, c) => {
      seen.refusal = error;
      return handleError(error, c);
    });
    return { app, seen };
  }

  it("rateLimit throws RateLimited at the first full bucket and counts no later ones", async () => {
    const shared = { windowSeconds: 60, count: "every-request", message: "slow down" } as const;
    const { app, seen } = limitedApp([
      rateLimit(limiter, { ...shared, name: "address", limit: 1, keys: () => ["a"] }),
      rateLimit(limiter, { ...shared, name: "token", limit: 5, keys: () => ["t"] }),
    ]);
    expect((await app.request("/", { method: "POST" })).status).toBe(200);
    now += 10_000;
    const refused = await app.request("/", { method: "POST" });
    expect(seen.refusal).toBeInstanceOf(RateLimited);
    expect(seen.refusal).toMatchObject({ message: "slow down", retryAfterSeconds: 50 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("50");
    expect(await refused.json()).toEqual({ error: "slow down" });
    expect(seen.handled).toBe(1);
    expect(await limiter.peek("token:t", 5, 60)).toMatchObject({ remaining: 4 });
  });

  it("counting failures: checks every bucket first, counts only the listed statuses", async () => {
    const failures = (status: 200 | 404 | 409 | 403) =>
      limitedApp(
        [
          rateLimit(limiter, {
            name: "guess",
            limit: 2,
            windowSeconds: 60,
            count: { failures: [404, 409] },
            message: "too many failures",
            keys: () => ["user:u", "ip:a"],
          }),
        ],
        status,
      );
    for (const status of [200, 403, 200] as const)
      expect((await failures(status).app.request("/", { method: "POST" })).status).toBe(status);
    expect(await limiter.peek("guess:user:u", 2, 60)).toMatchObject({ remaining: 2 });

    expect((await failures(404).app.request("/", { method: "POST" })).status).toBe(404);
    now += 5_000;
    expect((await failures(409).app.request("/", { method: "POST" })).status).toBe(409);
    expect(await limiter.peek("guess:ip:a", 2, 60)).toMatchObject({ allowed: false });

    const { app, seen } = failures(200);
    const refused = await app.request("/", { method: "POST" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("55");
    expect(await refused.json()).toEqual({ error: "too many failures" });
    expect(seen.handled).toBe(0);
  });

  it("leaves a request the route refuses as invalid to the route, uncounted, and keys by the valid body", async () => {
    const body = z.object({ email: z.string().trim().pipe(z.email()) });
    const params = z.object({ studyKey: z.string().regex(/^[a-z-]+$/) });
    const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    app.onError(handleError);
    const route = createRoute({
      method: "post",
      path: "/{studyKey}",
      request: { params, body: { required: true, content: { "application/json": { schema: body } } } },
      responses: { 200: { description: "done" } },
    });
    const limit = rateLimit(limiter, {
      name: "by-email",
      limit: 1,
      windowSeconds: 60,
      count: "every-request",
      message: "slow down",
      input: { params, json: body },
      keys: (_c, { email }) => [email],
    });
    app.openapi({ ...route, middleware: [limit] }, (c) => c.json({}, 200));
    const post = (path: string, payload: string, contentType = "application/json") =>
      app.request(path, { method: "POST", headers: { "content-type": contentType }, body: payload });

    expect((await post("/study", JSON.stringify({ email: "  a@example.org " }))).status).toBe(200);
    expect(await redis.keys(`${prefix}:*`)).toEqual([`${prefix}:ratelimit:by-email:a@example.org`]);
    // Full now; yet whatever the route refuses keeps the route's own answer and counts nowhere.
    expect((await post("/study", JSON.stringify({ email: "a@example.org" }))).status).toBe(429);
    expect((await post("/study", JSON.stringify({ email: "not an address" }))).status).toBe(400);
    expect((await post("/study", '{"email": ')).status).toBe(400);
    expect((await post("/Study 1", JSON.stringify({ email: "a@example.org" }))).status).toBe(400);
    expect((await post("/study", JSON.stringify({ email: "a@example.org" }), "text/plain")).status).toBe(415);
    expect((await post("/study", JSON.stringify({ email: "b@example.org" }))).status).toBe(200);
    expect(await limiter.peek("by-email:a@example.org", 1, 60)).toMatchObject({ retryAfterSeconds: 60 });
  });
});

describe("TRUST_PROXY: whose X-Forwarded-For entry names the client", () => {
  /** Initiates password resets from one client until the per-address limit (10 an hour) answers 429. */
  async function allowedBefore429(trustProxy: string, forwardedFor: (i: number) => string) {
    const t = await createTestApp({ env: { TRUST_PROXY: trustProxy } });
    try {
      for (let i = 0; i < 30; i++) {
        const res = await t.app.request("/v1/password-reset/initiate", {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Forwarded-For": forwardedFor(i) },
          // a new e-mail every time, so only the per-address bucket can fill up
          body: JSON.stringify({ email: `someone-${i}@example.org` }),
        });
        if (res.status === 429) return i;
      }
      return 30;
    } finally {
      await t.close();
    }
  }

  it("0 (the default): the header is ignored, so a client cannot pick a fresh bucket by forging it", async () => {
    expect(await allowedBefore429("0", (i) => `10.0.0.${i}`)).toBe(10);
  });

  it("1: the entry the proxy appended is the client; what the client wrote before it is not believed", async () => {
    expect(await allowedBefore429("1", (i) => `10.0.0.${i}, 192.0.2.7`)).toBe(10);
    expect(await allowedBefore429("1", (i) => `192.0.2.7, 10.0.0.${i}`)).toBe(30);
  });

  it("2: two proxies, the second-to-last entry is the client", async () => {
    expect(await allowedBefore429("2", (i) => `forged-${i}, 192.0.2.7, 10.1.1.1`)).toBe(10);
  });
});
