export {
  acceptedInput,
  failureRateLimits,
  rateLimit,
  unlessUnavailable,
  type RateLimitOptions,
} from "./rate-limit-middleware";
export {
  createRedisRateLimiter,
  type RateLimitCheck,
  type RateLimiter,
  type RateLimitDecision,
} from "./redis-sliding-window";
