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
      "account_deletions",
      "api_keys",
      "audit_log",
      "confidential_id_map",
      "confidential_responses",
      "daily_export_configs",
      "daily_exports",
      "idempotency_keys",
      "message_templates",
      "otp_codes",
      "outgoing_messages",
      "participant_files",
      "participant_message_schedule",
      "participant_sessions",
      "participants",
      "password_reset_tokens",
      "permissions",
      "profiles",
      "refresh_tokens",
      "reports",
      "researcher_messages",
      "researcher_subscriptions",
      "rule_failures",
      "stored_file_parts",
      "stored_files",
      "studies",
      "study_code_lists",
      "study_counters",
      "study_participant_counts",
      "study_rules",
      "study_task_retention",
      "study_timers",
      "study_variables",
      "survey_responses",
      "survey_versions",
      "task_chunks",
      "tasks",
      "token_revocations",
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

describe("participant counts", () => {
  it("stay exact through inserts, status changes, unrelated updates and deletes", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    await runMigrations(database.url);
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const counts = async () =>
        Object.fromEntries(
          (
            await sql<{ study_status: string; count: string }[]>`
              select study_status, count from study_participant_counts where study_key = 's' and count <> 0 order by 1`
          ).map((row) => [row.study_status, Number(row.count)]),
        );
      await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret')`;
      await sql`insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
        select 's', 'p' || i, case when i % 3 = 0 then 'temporary' else 'active' end, 0, 0 from generate_series(1, 30) i`;
      expect(await counts()).toEqual({ active: 20, temporary: 10 });
      await sql`update participants set study_status = 'exited' where participant_id in ('p1', 'p2')`;
      await sql`update participants set flags = '{"a":"b"}', study_status = study_status`;
      expect(await counts()).toEqual({ active: 18, exited: 2, temporary: 10 });
      await sql`delete from participants where study_status = 'temporary'`;
      expect(await counts()).toEqual({ active: 18, exited: 2 });
    } finally {
      await sql.end();
    }
  });
});
