import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index";
import { connectNoDelay, isSingleHostUrl } from "./socket";

export type Schema = typeof schema;
export type Database = PostgresJsDatabase<Schema>;
/** A drizzle transaction handle; domain code accepts either a Database or a Transaction. */
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
export type Executor = Database | Transaction;

export interface DbOptions {
  /** Pool size; the API and each worker process hold one pool. */
  max?: number;
  /** Name reported in pg_stat_activity, so operators can tell api from worker connections. */
  applicationName?: string;
}

export interface DbHandle {
  db: Database;
  /** The underlying postgres.js client, for bulk statements drizzle cannot express. */
  sql: postgres.Sql;
  close: (timeoutSeconds?: number) => Promise<void>;
}

/**
 * Seconds before a closed connection reconnects, after `retries` failed connections. postgres.js
 * counts the failures of the whole pool in one counter, so a database restart that cuts ten
 * connections at once counts as ten failures in a row, and its own backoff (3^retries / 100 s,
 * up to 20 s) then holds the queries waiting on the last of them for 10 to 20 seconds after the
 * database is back. Ours grows the same way but stops at 2 s: a database that is down is still
 * tried only every 1–2 s per connection, and one that is back is used within 2 s.
 */
export function reconnectDelaySeconds(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_DELAY_SECONDS);
}
export const MAX_RECONNECT_DELAY_SECONDS = 2;

export function createDb(url: string, options: DbOptions = {}): DbHandle {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => undefined,
    // No array types of our own to parse, and the look-up postgres.js runs on every new
    // connection rejects unhandled (ending the process) when the server drops the connection
    // while it runs: a database restart or failover must not take every process down.
    fetch_types: false,
    backoff: reconnectDelaySeconds,
    connection: { application_name: options.applicationName ?? "studyflow" },
    ...(isSingleHostUrl(url) ? { socket: connectNoDelay } : {}),
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    close: (timeoutSeconds = 5) => sql.end({ timeout: timeoutSeconds }),
  };
}
