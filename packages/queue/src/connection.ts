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

/** Where connection errors go: the process's logger. */
export interface ConnectionErrorLog {
  warn(details: object, message: string): void;
}

/**
 * ioredis reconnects on its own and reports each failed attempt as an "error" event; without a
 * listener it prints them to stderr unformatted. They belong in the process's log, at warn: the
 * readiness check and the 503s say what the outage means for callers.
 */
export function logConnectionErrors(connection: Redis, log: ConnectionErrorLog, role: string): Redis {
  connection.on("error", (error: Error) => log.warn({ err: error, redis: role }, "redis connection error"));
  return connection;
}
