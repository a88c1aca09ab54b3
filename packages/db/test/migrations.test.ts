import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { runMigrations } from "@studyflow/db";
import { createEmptyDatabase } from "@studyflow/testkit";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function tablesOf(url: string): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql<{ table_name: string }[]>`
      select table_name from information_schema.tables where table_schema = 'public' order by table_name`;
    return rows.map((row) => row.table_name);
  } finally {
    await sql.end();
  }
}

describe("migrations", () => {
  it("create every table on an empty database", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    await runMigrations(database.url);
    expect(await tablesOf(database.url)).toEqual([
      "confidential_id_map",
      "confidential_responses",
      "outgoing_messages",
      "participants",
      "password_reset_tokens",
      "permissions",
      "profiles",
      "reports",
      "researcher_messages",
      "studies",
      "study_code_lists",
      "study_counters",
      "study_rules",
      "study_variables",
      "survey_responses",
      "task_chunks",
      "tasks",
      "users",
    ]);
  });

  it("are idempotent, also when two migrators race", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    await Promise.all([runMigrations(database.url), runMigrations(database.url)]);
    await runMigrations(database.url);
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await sql<{ count: number }[]>`select count(*)::int as count from drizzle.__drizzle_migrations`;
      const journal = (await import("../migrations/meta/_journal.json", { with: { type: "json" } })).default;
      expect(row?.count).toBe(journal.entries.length);
    } finally {
      await sql.end();
    }
  });
});
