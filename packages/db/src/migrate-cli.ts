import { runMigrations } from "./migrate";

// The one-shot `migrate` service and `npm run db:migrate` run this; it is the only config it needs.
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
try {
  await runMigrations(url);
  console.log("migrations applied");
} catch (error) {
  console.error("migration failed:", error instanceof Error ? error.message : error);
  process.exit(1);
}
