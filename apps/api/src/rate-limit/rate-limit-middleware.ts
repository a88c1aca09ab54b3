import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { z } from "zod";
import { RateLimited, Unavailable } from "@studyflow/domain/errors";
import type { AppEnv } from "../app-env";
import { requestJson } from "../request-json";
import { safeParseQuickly } from "../validation";
import type { RateLimitCheck, RateLimiter } from "./redis-sliding-window";

/*
 * Our own small middleware over our own Redis script (redis-sliding-window.ts): hono
 * ships no rate limiter, and the community `hono-rate-limiter` (modelled on express-rate-limit)
 * takes one key per request, counts in fixed windows (2×limit can pass around a boundary) and
 * skips failed or successful requests by taking a count back afterwards. Our limits need several
 * buckets with their own limits per request (an address and an e-mail), a sliding window with an
 * exact Retry-After, attempts that count only when they fail yet are refused beforehand, and a
 * clock tests can move.
 */

/** What a limited route validates; see `input` below. */
export interface RateLimitInput<Json extends z.ZodType> {
  params?: z.ZodType;
  json?: Json;
}

export interface RateLimitOptions<Json extends z.ZodType> {
  /** Names the limit; each bucket is `${name}:${key}`. */
  name: string;
  /** Attempts allowed per bucket within the sliding window. */
  limit: number;
  windowSeconds: number;
  /** The buckets this request belongs to, checked in order (e.g. `ip:${address}`, `user:${id}`). */
  keys: (c: Context<AppEnv>, body: z.output<Json>) => readonly string[];
  /**
   * `every-request`: each request takes a slot in every bucket before the handler runs; the
   * first full bucket refuses it, and the buckets after it are not counted.
   * `{ failures }`: a request is refused if a bucket is already full, and takes a slot only when
   * the route answers with one of these statuses (guessing a secret, not using the route).
   */
  count: "every-request" | { failures: readonly number[] };
  /** The error of the 429 answer, or one made from the seconds until a retry can succeed. */
  message: string | ((retryAfterSeconds: number) => string);
  /**
   * The route's own params and JSON body schemas. Hono runs route middleware before the route's
   * validators, so the limit validates them too: a request the route refuses as invalid
   * (400, 415) is left to that answer, neither refused nor counted here, and `keys` gets the
   * validated body.
   */
  input?: RateLimitInput<Json>;
}

/** hono's validator reads a body as JSON only under these media types. */
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

export type Accepted<Json extends z.ZodType> = { accepted: true; body: z.output<Json> } | { accepted: false };

/**
 * Whether the route's validators will accept the request, and its body as they will see it.
 * Mirrors hono's JSON validator (a body that is not JSON-typed is validated as `{}`). Where
 * zod-openapi's content-type gate would still refuse a request accepted here (415), the request
 * is counted: a limit may count too much, never too little.
 */
export async function acceptedInput<Json extends z.ZodType>(
  c: Context<AppEnv>,
  input: RateLimitInput<Json> | undefined,
): Promise<Accepted<Json>> {
  if (input?.params && !(await safeParseQuickly(input.params, c.req.param())).success) return { accepted: false };
  if (!input?.json) return { accepted: true, body: undefined as z.output<Json> };
  const mediaType = c.req.header("content-type")?.split(";")[0]?.trim() ?? "";
  let raw: unknown = {};
  if (JSON_MEDIA_TYPE.test(mediaType)) {
    // The request's one parse, which the route's validator takes too.
    const body = await requestJson(c);
    if (body.kind !== "json") return { accepted: false };
    raw = body.value;
  }
  const parsed = await safeParseQuickly(input.json, raw);
  return parsed.success ? { accepted: true, body: parsed.data } : { accepted: false };
}

/**
 * A limiter that cannot answer (Redis out of reach) fails closed: the request is refused as
 * temporarily unavailable rather than let through unlimited.
 */
export async function unlessUnavailable<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    throw new Unavailable("rate limiting is unavailable; try again shortly", { cause: error });
  }
}

const refusal = (message: RateLimitOptions<z.ZodType>["message"], retryAfterSeconds: number) =>
  new RateLimited(typeof message === "string" ? message : message(retryAfterSeconds), retryAfterSeconds);

/** A route's rate limit: answers 429 with Retry-After (via RateLimited and app.onError) once a bucket is full. */
export function rateLimit<Json extends z.ZodType = z.ZodUndefined>(
  limiter: RateLimiter,
  options: RateLimitOptions<Json>,
) {
  const { name, limit, windowSeconds, count, message } = options;
  if (count !== "every-request") return failureRateLimits(limiter, [options]);
  return createMiddleware<AppEnv>(async (c, next) => {
    const input = await acceptedInput(c, options.input);
    if (!input.accepted) return next();
    const buckets = options.keys(c, input.body).map((key) => `${name}:${key}`);
    for (const bucket of buckets) {
      const decision = await unlessUnavailable(() => limiter.hit(bucket, limit, windowSeconds));
      if (!decision.allowed) throw refusal(message, decision.retryAfterSeconds);
    }
    await next();
  });
}

/** Options of a limit that counts failures only. */
type FailureLimit = RateLimitOptions<z.ZodType> & { count: { failures: readonly number[] } };

/**
 * Several limits that count failures only, as one middleware: the same answers as the
 * `rateLimit` middlewares of `limits` one after another (the first full bucket in their order
 * refuses; after the route, every bucket of a limit whose failure statuses include the answer
 * takes a slot), in one Redis round trip before the route and at most one after it, where the
 * separate middlewares take one per bucket each way (a sign-in's tiers: six).
 */
export function failureRateLimits(limiter: RateLimiter, limits: readonly RateLimitOptions<z.ZodType>[]) {
  const failureLimits = limits.map((options) => {
    if (options.count === "every-request") throw new Error(`failureRateLimits: ${options.name} counts every request`);
    return options as FailureLimit;
  });
  return createMiddleware<AppEnv>(async (c, next) => {
    const checks: (RateLimitCheck & { options: FailureLimit })[] = [];
    for (const options of failureLimits) {
      const input = await acceptedInput(c, options.input);
      if (!input.accepted) continue;
      for (const key of options.keys(c, input.body)) {
        checks.push({
          bucket: `${options.name}:${key}`,
          limit: options.limit,
          windowSeconds: options.windowSeconds,
          options,
        });
      }
    }
    if (checks.length === 0) return next();

    const decisions = await unlessUnavailable(() => limiter.decideAll(checks, false));
    decisions.forEach((decision, index) => {
      if (!decision.allowed) throw refusal(checks[index]!.options.message, decision.retryAfterSeconds);
    });
    await next();

    // An error thrown further on has become the response by now (hono hands it to app.onError).
    const failed = checks.filter((check) => check.options.count.failures.includes(c.res.status));
    if (failed.length > 0) await unlessUnavailable(() => limiter.decideAll(failed, true));
  });
}
