import { PostgresJsSession } from "drizzle-orm/postgres-js";
import type postgres from "postgres";
import type { Executor } from "./client";

/**
 * The postgres.js client under a drizzle database or transaction: inside a transaction, the
 * connection that transaction runs on. The hot statements of participant events are written for
 * postgres.js directly, because its tagged statements are prepared once per connection (one round
 * trip per execution), where drizzle's unnamed ones cost a describe round trip each time and
 * rebuild their SQL text per call.
 */
export function rawClientOf(executor: Executor): postgres.Sql {
  const session = executor._.session;
  if (session instanceof PostgresJsSession) return session.client as postgres.Sql;
  throw new Error("rawClientOf: the executor is not a postgres.js drizzle database");
}

/**
 * The channel every change of a cached row is announced on, as "<topic>:<key>"; the triggers of
 * migration 0010 send it, and the API's read cache listens (packages/domain/src/cache).
 */
export const CACHE_CHANNEL = "studyflow_cache";

/** What the announcements name: the topic is the first part of the payload. */
export const CACHE_TOPICS = ["study", "rules", "grants", "revocation", "api-key", "user", "profile"] as const;
export type CacheTopic = (typeof CACHE_TOPICS)[number];
