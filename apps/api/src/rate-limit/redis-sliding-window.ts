import { createHash, randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

export interface RateLimitDecision {
  allowed: boolean;
  /** Attempts still allowed in the current window (after this one, for `hit`). */
  remaining: number;
  /** 0 when allowed; otherwise whole seconds (at least 1) until one more attempt would be allowed. */
  retryAfterSeconds: number;
}

/** The store behind the `rateLimit` middleware; routes use the middleware, never this directly. */
export interface RateLimiter {
  /** Counts one attempt in the bucket and says whether it is within `limit` per `windowSeconds`. */
  hit(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitDecision>;
  /** Says whether one more attempt would be allowed, without counting it. */
  peek(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitDecision>;
  /**
   * `hit` or `peek` for several buckets in one round trip (a pipeline), in order: each decision is
   * the one its own `hit`/`peek` would give, as if they had been asked one after another.
   */
  decideAll(checks: readonly RateLimitCheck[], count: boolean): Promise<RateLimitDecision[]>;
  reset(bucket: string): Promise<void>;
}

/** One bucket of a batched decision (`decideAll`). */
export interface RateLimitCheck {
  bucket: string;
  limit: number;
  windowSeconds: number;
}

export interface RedisRateLimiterOptions {
  /** Namespace of the keys; buckets live under `${prefix}:ratelimit:`. */
  prefix: string;
  /** Milliseconds since the epoch: the app's clock; tests move it instead of sleeping. */
  clock: () => number;
}

/**
 * Sliding-window log: a sorted set per bucket holding one member per admitted attempt, scored
 * by its time. Unlike a fixed window, it never lets 2×limit through around a window boundary,
 * and Retry-After is exact: the moment the oldest admitted attempt leaves the window.
 * A refused attempt is not added, so a bucket never holds more than `limit` members however
 * hard it is hammered, and the refusal still holds because the window is full.
 * Everything runs in one script, so concurrent attempts cannot both take the last slot.
 *
 * KEYS[1] bucket key; ARGV: now (ms), window (ms), limit, "1" to count or "0" to peek, member.
 * Returns {allowed 1|0, attempts in the window, ms until a slot frees (0 when allowed)}.
 */
const SLIDING_WINDOW_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used < limit then
  if ARGV[4] == '1' then
    redis.call('ZADD', key, now, ARGV[5])
    redis.call('PEXPIRE', key, window)
    used = used + 1
  end
  return {1, used, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, used, tonumber(oldest[2]) + window - now}
`;

const SCRIPT_SHA = createHash("sha1").update(SLIDING_WINDOW_SCRIPT).digest("hex");

function parseReply(reply: unknown): [number, number, number] {
  if (Array.isArray(reply) && reply.length === 3 && reply.every((v) => typeof v === "number")) {
    return reply as [number, number, number];
  }
  throw new Error(`unexpected rate-limit script reply: ${JSON.stringify(reply)}`);
}

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith("NOSCRIPT");

function checkArguments(limit: number, windowSeconds: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`rate-limit window must be a positive whole number of seconds, got ${windowSeconds}`);
  }
}

export function createRedisRateLimiter(redis: Redis, options: RedisRateLimiterOptions): RateLimiter {
  const { clock } = options;
  const keyOf = (bucket: string) => `${options.prefix}:ratelimit:${bucket}`;

  async function run(key: string, args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(SCRIPT_SHA, 1, key, ...args);
    } catch (error) {
      // First use on this server, or its script cache was flushed: send the script itself once.
      if (isNoScript(error)) return redis.eval(SLIDING_WINDOW_SCRIPT, 1, key, ...args);
      throw error;
    }
  }

  /** The script for several keys in one pipeline (one round trip); each reply in order. */
  async function runAll(calls: readonly { key: string; args: (string | number)[] }[]): Promise<unknown[]> {
    const send = async (batch: readonly { key: string; args: (string | number)[] }[]) => {
      const pipeline = redis.pipeline();
      for (const { key, args } of batch) pipeline.evalsha(SCRIPT_SHA, 1, key, ...args);
      const replies = (await pipeline.exec()) ?? [];
      if (replies.length !== batch.length) throw new Error("rate-limit pipeline: replies missing");
      return replies;
    };
    const replies = await send(calls);
    const missing = replies.flatMap(([error], index) => (isNoScript(error) ? [index] : []));
    if (missing.length > 0) {
      // First use on this server, or its script cache was flushed: load the script, then send
      // again only the calls that did not run, so nothing is counted twice.
      await redis.script("LOAD", SLIDING_WINDOW_SCRIPT);
      const again = await send(missing.map((index) => calls[index]!));
      missing.forEach((index, position) => (replies[index] = again[position]!));
    }
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    });
  }

  function argsOf(check: RateLimitCheck, now: number, count: boolean) {
    checkArguments(check.limit, check.windowSeconds);
    // Two attempts in the same millisecond must stay two members of the set.
    const member = `${now}:${randomBytes(6).toString("hex")}`;
    return [now, check.windowSeconds * 1000, check.limit, count ? "1" : "0", member];
  }

  function decisionOf(reply: unknown, limit: number, windowSeconds: number): RateLimitDecision {
    const windowMs = windowSeconds * 1000;
    const [allowed, used, waitMs] = parseReply(reply);
    if (allowed === 1) return { allowed: true, remaining: Math.max(0, limit - used), retryAfterSeconds: 0 };
    // Clamped: a clock moved backwards (tests) must not ask for more than one window.
    const waitSeconds = Math.ceil(Math.min(Math.max(waitMs, 0), windowMs) / 1000);
    return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, waitSeconds) };
  }

  async function decide(bucket: string, limit: number, windowSeconds: number, count: boolean) {
    const check = { bucket, limit, windowSeconds };
    const args = argsOf(check, Math.floor(clock()), count);
    return decisionOf(await run(keyOf(bucket), args), limit, windowSeconds);
  }

  async function decideAll(checks: readonly RateLimitCheck[], count: boolean) {
    if (checks.length === 0) return [];
    const now = Math.floor(clock());
    const calls = checks.map((check) => ({ key: keyOf(check.bucket), args: argsOf(check, now, count) }));
    const replies = await runAll(calls);
    return checks.map((check, index) => decisionOf(replies[index], check.limit, check.windowSeconds));
  }

  return {
    hit: (bucket, limit, windowSeconds) => decide(bucket, limit, windowSeconds, true),
    peek: (bucket, limit, windowSeconds) => decide(bucket, limit, windowSeconds, false),
    decideAll,
    reset: async (bucket) => {
      await redis.del(keyOf(bucket));
    },
  };
}
