export { rateLimit, type RateLimitOptions } from "./rate-limit-middleware";
export { createRedisRateLimiter, type RateLimiter, type RateLimitDecision } from "./redis-sliding-window";
