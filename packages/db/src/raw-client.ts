import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
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

const dialect = new PgDialect();

/**
 * Runs a drizzle `sql` statement as a prepared statement of the executor's connection: one round
 * trip per execution once prepared, where `executor.execute` describes the statement first every
 * time. For statements a process runs over and over with a text of few shapes (the bulk run's
 * batch read and write): each distinct text stays prepared on its connection for the
 * connection's life. The answer is postgres.js's pending query: awaited, it gives the rows;
 * `.forEach` hands each row over as it arrives instead, so no array of the result is built.
 */
export function executePrepared<T extends Record<string, unknown>>(executor: Executor, statement: SQL) {
  const { sql: text, params } = dialect.sqlToQuery(statement);
  return rawClientOf(executor).unsafe<T[]>(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
}

/**
 * The channel every change of a cached row is announced on, as "<topic>:<key>"; the triggers of
 * migrations 0010 and 0016 send it, and the API's read cache listens (packages/domain/src/cache).
 */
export const CACHE_CHANNEL = "studyflow_cache";

/**
 * What the announcements name: the topic is the first part of the payload. "session" (participant
 * sign-in sessions) has no trigger: the domain's session revocation announces it itself, in its
 * transaction (packages/domain/src/participant-auth/sessions.ts).
 */
export const CACHE_TOPICS = [
  "study",
  "rules",
  "grants",
  "revocation",
  "api-key",
  "user",
  "profile",
  "session",
  "management-user",
  "management-session",
] as const;
export type CacheTopic = (typeof CACHE_TOPICS)[number];
