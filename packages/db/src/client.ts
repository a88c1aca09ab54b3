import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index";

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

export function createDb(url: string, options: DbOptions = {}): DbHandle {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => undefined,
    // No array types of our own to parse, and the look-up postgres.js runs on every new
    // connection rejects unhandled (ending the process) when the server drops the connection
    // while it runs: a database restart or failover must not take every process down.
    fetch_types: false,
    connection: { application_name: options.applicationName ?? "studyflow" },
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    close: (timeoutSeconds = 5) => sql.end({ timeout: timeoutSeconds }),
  };
}
