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
   * `hit` or `peek` for several buckets in one round trip (one script call), in order: each
   * decision is the one its own `hit`/`peek` would give, as if they had been asked one after
   * another, with no other client's attempt in between.
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
 * One call decides any number of buckets, one after another, atomically: a request's several
 * buckets (a sign-in checks eight) cost Redis one command, not one each.
 *
 * KEYS: the bucket keys; ARGV: now (ms), "1" to count or "0" to peek, then for each key its
 * window (ms), limit and member. Returns, for each key in order, allowed 1|0, attempts in the
 * window, ms until a slot frees (0 when allowed).
 */
const SLIDING_WINDOW_SCRIPT = `
local now = tonumber(ARGV[1])
local count = ARGV[2] == '1'
local out = {}
for i, key in ipairs(KEYS) do
  local at = 3 * i
  local window = tonumber(ARGV[at])
  local limit = tonumber(ARGV[at + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local used = redis.call('ZCARD', key)
  if used < limit then
    if count then
      redis.call('ZADD', key, now, ARGV[at + 2])
      redis.call('PEXPIRE', key, window)
      used = used + 1
    end
    out[#out + 1] = 1
    out[#out + 1] = used
    out[#out + 1] = 0
  else
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    out[#out + 1] = 0
    out[#out + 1] = used
    out[#out + 1] = tonumber(oldest[2]) + window - now
  end
end
return out
`;

const SCRIPT_SHA = createHash("sha1").update(SLIDING_WINDOW_SCRIPT).digest("hex");

/** The script's reply: a decision's three numbers for each of `keys` buckets. */
function parseReply(reply: unknown, keys: number): [number, number, number][] {
  if (Array.isArray(reply) && reply.length === 3 * keys && reply.every((v) => typeof v === "number")) {
    return Array.from(
      { length: keys },
      (_, index) => reply.slice(3 * index, 3 * index + 3) as [number, number, number],
    );
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

  /**
   * The member an attempt adds to a bucket: two attempts in the same millisecond must stay two
   * members of the set. One random part per call, and the check's place in it after.
   */
  const newMember = (now: number) => `${now}:${randomBytes(6).toString("hex")}`;

  /** Decides `checks` in one script call (one command, one round trip). */
  async function run(checks: readonly RateLimitCheck[], count: boolean): Promise<[number, number, number][]> {
    const now = Math.floor(clock());
    const member = newMember(now);
    const keys = checks.map((check) => keyOf(check.bucket));
    const args: (string | number)[] = [now, count ? "1" : "0"];
    checks.forEach((check, index) => {
      checkArguments(check.limit, check.windowSeconds);
      args.push(check.windowSeconds * 1000, check.limit, `${member}:${index}`);
    });
    let reply: unknown;
    try {
      reply = await redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...args);
    } catch (error) {
      // First use on this server, or its script cache was flushed: nothing ran, so the script
      // itself is sent once, and nothing is counted twice.
      if (!isNoScript(error)) throw error;
      reply = await redis.eval(SLIDING_WINDOW_SCRIPT, keys.length, ...keys, ...args);
    }
    return parseReply(reply, checks.length);
  }

  function decisionOf([allowed, used, waitMs]: [number, number, number], limit: number, windowSeconds: number) {
    const windowMs = windowSeconds * 1000;
    if (allowed === 1) return { allowed: true, remaining: Math.max(0, limit - used), retryAfterSeconds: 0 };
    // Clamped: a clock moved backwards (tests) must not ask for more than one window.
    const waitSeconds = Math.ceil(Math.min(Math.max(waitMs, 0), windowMs) / 1000);
    return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, waitSeconds) };
  }

  async function decide(bucket: string, limit: number, windowSeconds: number, count: boolean) {
    const [reply] = await run([{ bucket, limit, windowSeconds }], count);
    return decisionOf(reply!, limit, windowSeconds);
  }

  async function decideAll(checks: readonly RateLimitCheck[], count: boolean) {
    if (checks.length === 0) return [];
    const replies = await run(checks, count);
    return checks.map((check, index) => decisionOf(replies[index]!, check.limit, check.windowSeconds));
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
