import postgres from "postgres";

/** Where the tests find the real services: the machine's defaults, or the environment's. */
export const adminDatabaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const testRedisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** The open-handle check (open-handles.ts): how long it waits for closes under way, and where it reports instead of failing. */
export const openHandlesSettleMs = Number(process.env.TEST_OPEN_HANDLES_SETTLE_MS ?? 5_000);
export const openHandlesReport = process.env.TEST_OPEN_HANDLES_REPORT || undefined;

export function databaseUrlFor(name: string): string {
  const url = new URL(adminDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function adminClient(): postgres.Sql {
  return postgres(adminDatabaseUrl, { max: 1, onnotice: () => undefined });
}

/** Database names are built only from this run's id and counters, never from input. */
export function quoteIdent(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`refusing unexpected database name ${name}`);
  return `"${name}"`;
}
