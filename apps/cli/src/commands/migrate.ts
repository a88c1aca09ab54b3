import { z } from "zod";
import { runMigrations } from "@studyflow/db";
import { defineCommand, type CliContext } from "../command-definition";

export async function migrate(ctx: CliContext) {
  await runMigrations(ctx.config.DATABASE_URL);
  const data = { migrated: true };
  ctx.output.result(data, ["migrations applied"]);
  return data;
}

export const migrateCommand = defineCommand({
  name: "migrate",
  summary: "apply pending database migrations to DATABASE_URL",
  flags: () => [],
  values: z.object({}),
  uses: "database",
  run: (ctx) => migrate(ctx),
});
