/** The database the migrate entry applies migrations to (the one-shot `migrate` service sets it). */
export function databaseUrlFromEnv(): string {
  return process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
}
