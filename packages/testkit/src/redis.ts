import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { testRedisUrl } from "./env";

/** A BullMQ prefix of its own for each test, so queues of parallel tests never meet. */
export function uniqueQueuePrefix(): string {
  return `sf-test-${randomBytes(5).toString("hex")}`;
}

/** A connection suitable for BullMQ workers (blocking commands need unlimited retries). */
export function createTestRedis(): Redis {
  return new Redis(testRedisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
}

/** Deletes every key under a prefix (BullMQ keys are `<prefix>:<queue>:…`). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}
