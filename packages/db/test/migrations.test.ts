import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { runMigrations } from "@studyflow/db";
import { createEmptyDatabase } from "@studyflow/testkit";
import { migrateUpTo } from "./migrate-up-to";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * A new database migrated to `upTo` (every migration without it) and one connection to it; both go
 * after the test.
 */
async function migratedDatabase(upTo?: string): Promise<{ url: string; sql: postgres.Sql }> {
  const database = await createEmptyDatabase();
  // postgres.js connects on the first query: nothing is open while the migrations run
  const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
  cleanups.push(async () => {
    await sql.end();
    await database.drop();
  });
  await (upTo === undefined ? runMigrations(database.url) : migrateUpTo(database.url, upTo));
  return { url: database.url, sql };
}

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
      "app_role_templates",
      "app_roles",
      "audit_log",
      "case_import_checkpoints",
      "case_import_records",
      "confidential_id_map",
      "confidential_responses",
      "daily_export_configs",
      "daily_exports",
      "email_templates",
      "explorer_unkept_flag_keys",
      "idempotency_keys",
      "management_sessions",
      "management_users",
      "message_templates",
      "otp_codes",
      "otp_failed_attempts",
      "outgoing_messages",
      "participant_entry_buckets",
      "participant_files",
      "participant_flag_buckets",
      "participant_flag_values",
      "participant_id_buckets",
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
      "response_arrival_buckets",
      "rule_failures",
      "scheduled_emails",
      "service_accounts",
      "sms_templates",
      "stored_file_parts",
      "stored_files",
      "studies",
      "study_code_lists",
      "study_counters",
      "study_participant_counts",
      "study_rules",
      "study_stats",
      "study_task_retention",
      "study_timers",
      "study_variables",
      "survey_responses",
      "survey_versions",
      "task_chunks",
      "tasks",
      "token_revocations",
      "user_attributes",
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

  it("are dated in the journal's order, so a database migrated one step at a time takes every one", async () => {
    // The migrator applies only migrations dated after the last one applied: one dated before its
    // predecessor would be skipped on a database that already has the predecessor.
    const journal = (await import("../migrations/meta/_journal.json", { with: { type: "json" } })).default;
    const out = journal.entries.filter((entry, index) => index > 0 && entry.when <= journal.entries[index - 1]!.when);
    expect(out.map((entry) => entry.tag)).toEqual([]);
  });
});

describe("0031_stored_file_parts_lz4", () => {
  it("stores a file's parts compressed with lz4 (EXTENDED) rather than uncompressed (EXTERNAL)", async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    await migrateUpTo(database.url, "0031_stored_file_parts_lz4");
    const column = async () => {
      const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
      try {
        const [row] = await sql<{ storage: string; compression: string }[]>`
          select attstorage as storage, attcompression as compression from pg_attribute
          where attrelid = 'stored_file_parts'::regclass and attname = 'data'`;
        return row;
      } finally {
        await sql.end();
      }
    };
    expect(await column()).toEqual({ storage: "e", compression: "" });
    await runMigrations(database.url);
    expect(await column()).toEqual({ storage: "x", compression: "l" });
  });
});

describe("0032_stored_files_gzip_framing", () => {
  it("marks the gzip files written before it as gzip members, and no other file", async () => {
    const { url, sql } = await migratedDatabase("0031_stored_file_parts_lz4");
    await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret')`;
    await sql`insert into stored_files (study_key, name, content_type, content_encoding)
        values ('s', 'a.csv.gz', 'text/csv', 'gzip'), ('s', 'b.csv', 'text/csv', null)`;
    await runMigrations(url);
    expect(await sql`select name, gzip_framing from stored_files order by name`).toEqual([
      { name: "a.csv.gz", gzip_framing: "members" },
      { name: "b.csv", gzip_framing: null },
    ]);
    // a gzip file says how its parts are stored; any other file does not
    for (const [encoding, framing] of [
      ["gzip", null],
      [null, "stream"],
      ["gzip", "zip"],
    ] as const) {
      await expect(
        sql`insert into stored_files (study_key, name, content_type, content_encoding, gzip_framing)
            values ('s', 'c', 'text/csv', ${encoding}, ${framing})`,
      ).rejects.toThrow(/stored_files_gzip_framing/);
    }
  });
});

describe("participant counts", () => {
  it("stay exact through inserts, status changes, unrelated updates and deletes", async () => {
    const { sql } = await migratedDatabase();
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
  });

  it("are written only by statements that change a status or an entry time (0033)", async () => {
    const { sql } = await migratedDatabase();
    await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret')`;
    await sql`insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
        select 's', 'p' || i, 'active', 600 * i, 0 from generate_series(1, 4) i`;
    const applied = await sql.begin(async (tx) => {
      // this transaction's calls of the function that writes the counter rows
      await tx`set local track_functions = 'all'`;
      const calls = async () =>
        Number(
          (
            await tx<{ calls: string }[]>`
              select pg_stat_get_xact_function_calls('participant_counts_apply'::regproc) as calls`
          )[0]!.calls ?? 0,
        );
      const seen: number[] = [];
      // a submit: the state is written back, no status or entry time changed
      await tx`update participants set flags = '{"a":"b"}', study_status = study_status, entered_at = entered_at,
          last_submissions = '{"weekly": 1}'`;
      seen.push(await calls());
      // an enrolment that finds the participant there already inserts nothing
      await tx`insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
          values ('s', 'p1', 'active', 0, 0) on conflict do nothing`;
      seen.push(await calls());
      await tx`delete from participants where participant_id = 'nobody'`;
      seen.push(await calls());
      await tx`update participants set study_status = 'exited' where participant_id = 'p1'`;
      seen.push(await calls());
      return seen;
    });
    expect(applied).toEqual([0, 0, 0, 1]);
    expect(
      await sql`select study_status, count::int from study_participant_counts where count <> 0 order by 1`,
    ).toEqual([
      { study_status: "active", count: 3 },
      { study_status: "exited", count: 1 },
    ]);
    // the entry buckets agree: ten minutes each, one participant in each
    expect(
      await sql`select bucket::int, study_status, count::int from participant_entry_buckets
          where width = 600 and count <> 0 order by 1`,
    ).toEqual([
      { bucket: 1, study_status: "exited", count: 1 },
      { bucket: 2, study_status: "active", count: 1 },
      { bucket: 3, study_status: "active", count: 1 },
      { bucket: 4, study_status: "active", count: 1 },
    ]);
  });
});

describe("0029_explorer_submission_and_id_counts", () => {
  it("backfills submission counts and id-prefix counts that equal a recount, kept so after more writes", async () => {
    const { url, sql } = await migratedDatabase("0029_explorer_submission_and_id_counts");
    await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret'), ('t', 'secret-secret-secret')`;
    await sql`insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
        select case when i % 4 = 0 then 't' else 's' end, substr(md5(i::text), 1, 1 + i % 9), 'active', 0, 0
        from generate_series(1, 300) i on conflict do nothing`;
    await sql`insert into survey_responses (study_key, participant_id, key, arrived_at, submitted_at)
        select 's', 'p', case when i % 3 = 0 then 'intake' else 'weekly' end, i * 1000, i * 1000 - (i % 5) * 3000
        from generate_series(1, 200) i`;
    await runMigrations(url);
    const differences = () => sql`
        with kept as (
          select 'id' as kind, study_key, prefix_length::int as width, prefix::text as bucket, count
          from participant_id_buckets where count <> 0
          union all
          select 'submitted', study_key || '/' || survey_key, width, bucket::text, sum(submitted)
          from response_arrival_buckets group by 1, 2, 3, 4 having sum(submitted) <> 0
          union all
          select 'arrived', study_key || '/' || survey_key, width, bucket::text, sum(count)
          from response_arrival_buckets group by 1, 2, 3, 4 having sum(count) <> 0),
        counted as (
          select 'id' as kind, study_key, l.len as width, left(participant_id, l.len) as bucket, count(*) as count
          from participants cross join (values (3), (4)) l(len) group by 1, 2, 3, 4
          union all
          select 'submitted', study_key || '/' || key, w.width, explorer_bucket(submitted_at, w.width)::text, count(*)
          from survey_responses cross join (values (3600), (86400)) w(width) group by 1, 2, 3, 4
          union all
          select 'arrived', study_key || '/' || key, w.width, explorer_bucket(arrived_at, w.width)::text, count(*)
          from survey_responses cross join (values (3600), (86400)) w(width) group by 1, 2, 3, 4)
        (select * from kept except select * from counted) union all (select * from counted except select * from kept)`;
    expect(await differences()).toEqual([]);
    const [kept] = await sql<{ ids: number; submitted: number }[]>`
        select (select count(*)::int from participant_id_buckets where count <> 0) as ids,
               (select count(*)::int from response_arrival_buckets where submitted <> 0) as submitted`;
    expect(kept!.ids).toBeGreaterThan(50);
    expect(kept!.submitted).toBeGreaterThan(50);
    await sql`delete from participants where participant_id like 'a%'`;
    await sql`update participants set participant_id = participant_id || 'x' where participant_id like 'b%'`;
    await sql`update survey_responses set submitted_at = submitted_at + 5000 where arrived_at % 3000 = 0`;
    await sql`delete from survey_responses where arrived_at % 7000 = 0`;
    expect(await differences()).toEqual([]);
  });
});

describe("0017_api_keys_without_copies", () => {
  it("removes the sealed copies of API keys and keeps the keys working (hash, prefix, account)", async () => {
    const { url, sql } = await migratedDatabase("0017_api_keys_without_copies");
    const [account] = await sql`insert into service_accounts (label, created_by) values ('etl', 'op') returning id`;
    await sql`insert into api_keys (subject, service_account_id, key_hash, key_prefix, created_by, expires_at, key_enc)
        values (${account!.id}, ${account!.id}, 'hash', 'sf_abcdefgh', 'op', now() + interval '1 day',
          '\\x0102030405'::bytea)`;
    await runMigrations(url);
    const columns = await sql<{ column_name: string }[]>`
        select column_name from information_schema.columns where table_name = 'api_keys' order by column_name`;
    expect(columns.map((row) => row.column_name)).not.toContain("key_enc");
    const [key] = await sql`select subject, service_account_id, key_hash, key_prefix from api_keys`;
    expect({ ...key }).toEqual({
      subject: account!.id,
      service_account_id: account!.id,
      key_hash: "hash",
      key_prefix: "sf_abcdefgh",
    });
  });
});

describe("0016_case_admin", () => {
  it("keeps earlier permissions, API keys and variables: study rights of management users, described since their value", async () => {
    const { url, sql } = await migratedDatabase("0016_case_admin");
    await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret')`;
    await sql`insert into permissions (subject_id, study_key, action) values
        ('alice', 's', 'manage-surveys'), ('alice', '*', 'read-study-config'), ('robot', 's', '*')`;
    await sql`insert into api_keys (subject, key_hash, key_prefix, created_by, expires_at)
        values ('robot', 'hash', 'sf_abcdefgh', 'op', now() + interval '1 day')`;
    await sql`insert into study_variables (study_key, key, type, value, value_updated_at)
        values ('s', 'v', 'int', '3', '2024-01-02T03:04:05Z')`;
    await sql`insert into survey_responses (study_key, participant_id, key, arrived_at)
        select 's', 'p' || i, 'intake', 0 from generate_series(1, 3) i`;
    await runMigrations(url);

    const grants = await sql`
        select subject_id, subject_type, resource_type, study_key, action, limiter from permissions order by id`;
    expect(grants.map((row) => ({ ...row }))).toEqual([
      {
        subject_id: "alice",
        subject_type: "management-user",
        resource_type: "study",
        study_key: "s",
        action: "manage-surveys",
        limiter: null,
      },
      {
        subject_id: "alice",
        subject_type: "management-user",
        resource_type: "study",
        study_key: "*",
        action: "read-study-config",
        limiter: null,
      },
      {
        subject_id: "robot",
        subject_type: "management-user",
        resource_type: "study",
        study_key: "s",
        action: "*",
        limiter: null,
      },
    ]);
    const [key] = await sql`select subject, service_account_id from api_keys`;
    expect({ ...key }).toEqual({ subject: "robot", service_account_id: null });
    const [variable] = await sql<{ label: string; created_at: Date; config_updated_at: Date; ui_priority: number }[]>`
        select label, created_at, config_updated_at, ui_priority from study_variables`;
    expect(variable?.label).toBe("");
    expect(variable?.ui_priority).toBe(0);
    expect(variable?.created_at.toISOString()).toBe("2024-01-02T03:04:05.000Z");
    expect(variable?.config_updated_at.toISOString()).toBe("2024-01-02T03:04:05.000Z");
    const stats = await sql`select study_key, response_count from study_stats`;
    expect(stats.map((row) => ({ ...row }))).toEqual([{ study_key: "s", response_count: "3" }]);
  });

  it("tells grants apart by subject type, resource type and limiter, and refuses the same grant twice", async () => {
    const { sql } = await migratedDatabase();
    const grant = (subjectType: string, resourceType: string, key: string, action: string, limiter: unknown) =>
      sql`insert into permissions (subject_id, subject_type, resource_type, study_key, action, limiter)
          values ('x', ${subjectType}, ${resourceType}, ${key}, ${action}, ${limiter === null ? null : sql.json(limiter as never)})`;
    await grant("management-user", "study", "s", "update-survey", null);
    await grant("service-account", "study", "s", "update-survey", null);
    await grant("management-user", "messaging", "s", "update-survey", null);
    await grant("management-user", "study", "s", "update-survey", [{ surveyKey: "a" }]);
    await grant("management-user", "study", "s", "update-survey", [{ surveyKey: "b" }]);
    await expect(grant("management-user", "study", "s", "update-survey", null)).rejects.toThrow(/permissions_uq/);
    // jsonb's text form is canonical: the same maps in another key order are the same limiter
    await grant("management-user", "study", "s", "get-responses", [{ a: "1", b: "2" }]);
    await expect(grant("management-user", "study", "s", "get-responses", [{ b: "2", a: "1" }])).rejects.toThrow(
      /permissions_uq/,
    );
  });

  it("keeps one e-mail template per message type among the global ones and per study", async () => {
    const { sql } = await migratedDatabase();
    await sql`insert into studies (key, secret) values ('s', 'secret-secret-secret')`;
    const template = (studyKey: string | null) =>
      sql`insert into email_templates (study_key, message_type, updated_by) values (${studyKey}, 'invitation', 'op')`;
    await template(null);
    await template("s");
    await expect(template(null)).rejects.toThrow(/email_templates_type_study_uq/);
    await expect(template("s")).rejects.toThrow(/email_templates_type_study_uq/);
    // a study's templates, schedules and stats go with it
    await sql`insert into scheduled_emails (type, study_key, template, next_time, created_by)
        values ('study-participants', 's', '{}', 0, 'op')`;
    await sql`insert into study_stats (study_key, response_count) values ('s', 4)`;
    await sql`delete from studies where key = 's'`;
    const [left] = await sql<{ templates: number; schedules: number; stats: number }[]>`
        select (select count(*)::int from email_templates) as templates,
               (select count(*)::int from scheduled_emails) as schedules,
               (select count(*)::int from study_stats) as stats`;
    expect(left).toEqual({ templates: 1, schedules: 0, stats: 0 });
  });
});
