import { databaseUrlFromEnv } from "./env";
import { runMigrations } from "./migrate";

// The one-shot `migrate` service and `npm run db:migrate` run this.
const url = databaseUrlFromEnv();
try {
  await runMigrations(url);
  console.log("migrations applied");
} catch (error) {
  console.error("migration failed:", error instanceof Error ? error.message : error);
  process.exit(1);
}
