import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";

/**
 * The SQL migrations, found from this module's own file: packages/db/migrations when the sources
 * run (tsx, tests), dist/migrations when a bundle runs (dist/<entry>/<file>.js: the build copies
 * the folder there, see esbuild.config.ts). Not from the working directory, so both work from anywhere.
 */
export const migrationsFolder = fileURLToPath(new URL("../migrations", import.meta.url));

/** Arbitrary constant naming the lock that serialises migrators across processes. */
const MIGRATION_LOCK_ID = 7_420_031_001;

/**
 * Applies pending migrations while holding a session advisory lock, so two migrators
 * started at once (compose replicas, CI) apply each migration exactly once.
 */
export async function runMigrations(url: string): Promise<void> {
  // One connection: the advisory lock belongs to a session and must be the one migrating.
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    try {
      await migrate(drizzle(sql), { migrationsFolder });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
