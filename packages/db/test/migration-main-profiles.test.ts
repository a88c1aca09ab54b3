import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { runMigrations } from "@studyflow/db";
import { createEmptyDatabase } from "@studyflow/testkit";
import { migrateUpTo } from "./migrate-up-to";

const MIGRATION = "0022_main_profiles_and_repeated_signups";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe(MIGRATION, () => {
  it("gives main profiles made without them case-backend's alias and consent; named or consented ones stay", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    await migrateUpTo(database.url, MIGRATION);
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const created = new Date("2025-03-04T05:06:07Z");
      const consented = new Date("2025-06-01T00:00:00Z");
      const user = async (email: string) => {
        const [row] = await sql<{ id: string }[]>`
          insert into users (email, password_hash, created_at) values (${email}, 'x', ${created}) returning id`;
        return row!.id;
      };
      const profile = async (userId: string, id: string, alias: string, main: boolean, consent: Date | null) => {
        await sql`insert into profiles (id, user_id, alias, main_profile, consent_confirmed_at)
          values (${id}, ${userId}, ${alias}, ${main}, ${consent})`;
      };
      const pat = await user("pat@example.nl");
      await profile(pat, "pat-main", "", true, null);
      await profile(pat, "pat-child", "", false, null);
      await profile(await user("émile@sub.example.org"), "emile-main", "", true, null);
      await profile(await user("@example.org"), "empty-local", "", true, null);
      await profile(await user("kim@example.org"), "kim-named", "Kim", true, null);
      await profile(await user("lou@example.org"), "lou-consented", "", true, consented);

      await runMigrations(database.url);

      const rows = await sql<{ id: string; alias: string; consent_confirmed_at: Date | null }[]>`
        select id, alias, consent_confirmed_at from profiles order by id`;
      expect(Object.fromEntries(rows.map((row) => [row.id, [row.alias, row.consent_confirmed_at]]))).toEqual({
        "emile-main": ["é****@sub.example.org", created],
        "empty-local": ["****@**", created],
        "kim-named": ["Kim", null],
        "lou-consented": ["", consented],
        "pat-child": ["", null],
        "pat-main": ["p****@example.nl", created],
      });
      const [column] = await sql<{ data_type: string }[]>`
        select data_type from information_schema.columns where table_name = 'users' and column_name = 'signup_repeated_at'`;
      expect(column?.data_type).toBe("timestamp with time zone");
    } finally {
      await sql.end();
    }
  });
});
