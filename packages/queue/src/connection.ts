import { Redis, type RedisOptions } from "ioredis";

/**
 * BullMQ workers issue blocking commands, which need `maxRetriesPerRequest: null`;
 * producers give up after a few retries instead, so an API request never hangs on a lost Redis.
 */
export function createRedisConnection(url: string, role: "worker" | "producer", extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: role === "worker" ? null : 2,
    ...extra,
  });
}
