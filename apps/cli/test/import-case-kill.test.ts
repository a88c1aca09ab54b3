/**
 * `import:case` killed with SIGKILL in the middle of a large collection, then run again, leaves
 * the same database as one uninterrupted run: every table compared row by row. The dump (several
 * batches per collection) is generated here from the case-backend fixtures, and the CLI runs as a
 * real process, so the kill lands wherever the import happens to be.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ObjectId } from "bson";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASE_IMPORT_BATCH_SIZE } from "@studyflow/domain/case-import";
import { createTestDatabase, quoteIdent, type TestDatabase } from "@studyflow/testkit";
import {
  caseParticipant,
  caseReport,
  caseResponse,
  caseStudy,
  caseSurvey,
  caseUser,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { managementDump } from "../../../packages/domain/test/case-import/case-management-dump";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const HASH = "$argon2id$v=19$m=65536,t=4,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U";
const PARTICIPANTS = 3_000;
const RESPONSES = 6_000;
const REPORTS = 1_500;
const USERS = 1_000;

/**
 * Columns the import fills with the time it runs (or the database's now() at insert): they differ
 * between any two runs, killed or not. Everything else must be equal.
 */
const STAMPED: Record<string, string[]> = {
  case_import_checkpoints: ["updated_at", "completed_at"],
  case_import_records: ["imported_at"],
  email_templates: ["updated_at"],
  sms_templates: ["updated_at"],
  scheduled_emails: ["updated_at"],
  permissions: ["created_at"],
  researcher_subscriptions: ["created_at"],
  studies: ["created_at", "updated_at"],
};

interface Run {
  child: ReturnType<typeof spawn>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function startImport(database: TestDatabase, dumpDir: string, report: string): Run {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "test", DATABASE_URL: database.url };
  delete env.INIT_CWD;
  delete env.CASE_STUDY_GLOBAL_SECRET;
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "apps/cli/src/main.ts",
      "import:case",
      "--dump",
      dumpDir,
      "--instance",
      "nl",
      "--report",
      report,
      "--json",
    ],
    { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exit };
}

/**
 * Kept counts spread over slots by the writing connection (backend pid): two runs put the same
 * counts in other slots, so their sums per bucket are compared.
 */
const SLOTTED: Record<string, string> = {
  response_arrival_buckets: `select jsonb_build_object('study_key', study_key, 'survey_key', survey_key,
      'width', width, 'bucket', bucket, 'count', sum(count))::text as row
    from response_arrival_buckets group by study_key, survey_key, width, bucket
    having sum(count) <> 0 order by 1`,
  participant_flag_buckets: `select jsonb_build_object('study_key', study_key, 'flag_key', flag_key,
      'flag_value', flag_value, 'width', width, 'bucket', bucket, 'count', sum(count))::text as row
    from participant_flag_buckets group by study_key, flag_key, flag_value, width, bucket
    having sum(count) <> 0 order by 1`,
};

/** Every table of the schema, each row as JSON without the stamped columns, in a fixed order. */
async function tableContents(database: TestDatabase): Promise<Map<string, string[]>> {
  const tables = await database.db.execute<{ name: string }>(
    sql`select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  );
  const contents = new Map<string, string[]>();
  for (const { name } of tables) {
    const dropped = (STAMPED[name] ?? []).map((column) => ` - '${column}'`).join("");
    const rows = await database.db.execute<{ row: string }>(
      sql.raw(SLOTTED[name] ?? `select (to_jsonb(t)${dropped})::text as row from ${quoteIdent(name)} t order by 1`),
    );
    contents.set(
      name,
      rows.map((row) => row.row),
    );
  }
  return contents;
}

describe("import:case killed mid-import", () => {
  let killed: TestDatabase;
  let whole: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    [killed, whole] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    dir = await mkdtemp(join(tmpdir(), "import-case-kill-"));
    const participantIds = Array.from({ length: PARTICIPANTS }, (_, i) => `p-${String(i).padStart(5, "0")}`);
    const responses = Array.from({ length: RESPONSES }, (_, i) =>
      caseResponse(participantIds[i % PARTICIPANTS]!, i % 3 === 0 ? "intake" : "weekly", "v1", 1_700_000_000 + i * 60, {
        value: String(i % 7),
      }),
    );
    // researchers, service accounts and messaging too, so every table the import writes is compared
    const management = managementDump().spec.databases;
    const knownGrants = management.users.permissions.slice(0, -1); // the last one's researcher is not in the dump
    await writeCaseDump(join(dir, "dump"), {
      instance: "nl",
      gzip: true,
      databases: {
        // the schedule with a participant condition is refused by design
        messageDB: { ...management.messageDB, "auto-messages": management.messageDB["auto-messages"].slice(0, 1) },
        studyDB: {
          "study-infos": [caseStudy("ticks"), ...management.studyDB["study-infos"]],
          ticks_surveys: [caseSurvey("intake", "v1", 1_690_000_000), caseSurvey("weekly", "v1", 1_690_000_000)],
          ticks_participants: participantIds.map((id) => caseParticipant(id)),
          ticks_surveyResponses: responses,
          ticks_reports: Array.from({ length: REPORTS }, (_, i) =>
            caseReport(participantIds[i]!, "symptoms", responses[i]!._id.toHexString(), 1_700_000_000 + i),
          ),
        },
        users: {
          ...management.users,
          users: [
            ...management.users.users,
            ...Array.from({ length: USERS }, (_, i) =>
              caseUser(`user-${i}@example.org`, HASH, [new ObjectId(), new ObjectId()]),
            ),
          ],
          permissions: knownGrants,
        },
      },
    });
  });
  afterAll(async () => {
    await Promise.all([killed?.drop(), whole?.drop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("a rerun after SIGKILL gives the database one uninterrupted run gives, table by table", async () => {
    const dump = join(dir, "dump");
    const first = startImport(killed, dump, join(dir, "first.jsonl"));
    let exitedEarly = false;
    void first.exit.then(() => {
      exitedEarly = true;
    });
    // kill as soon as a batch of a multi-batch collection is committed and the collection is not done
    let at: { collection: string; done: number } | undefined;
    while (!exitedEarly && at === undefined) {
      const [row] = await killed.db.execute<{ collection: string; done: number }>(
        sql`select collection, documents_done as done from case_import_checkpoints
            where completed_at is null and documents_done >= ${CASE_IMPORT_BATCH_SIZE} limit 1`,
      );
      if (row) at = row;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(at, "the import ended before a batch of a large collection was committed").toBeDefined();
    first.child.kill("SIGKILL");
    const firstExit = await first.exit;
    expect(firstExit.signal).toBe("SIGKILL");
    const unfinished = await killed.db.execute<{ collection: string }>(
      sql`select collection from case_import_checkpoints where completed_at is null`,
    );
    expect(unfinished.length).toBeGreaterThan(0);

    const [rerun, uninterrupted] = await Promise.all([
      startImport(killed, dump, join(dir, "rerun.jsonl")).exit,
      startImport(whole, dump, join(dir, "whole.jsonl")).exit,
    ]);
    const reported = async (name: string) => await readFile(join(dir, name), "utf8");
    expect(await reported("whole.jsonl")).toBe("");
    expect(await reported("rerun.jsonl")).toBe("");
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    expect(rerun.code, rerun.stderr).toBe(0);
    const resumed = JSON.parse(rerun.stdout) as {
      problems: number;
      collections: { collection: string; resumedAfter: number }[];
    };
    expect(resumed.problems).toBe(0);
    expect(resumed.collections.some((c) => c.resumedAfter > 0)).toBe(true);
    expect((JSON.parse(uninterrupted.stdout) as { problems: number }).problems).toBe(0);

    const [afterKill, afterOneRun] = await Promise.all([tableContents(killed), tableContents(whole)]);
    expect([...afterKill.keys()]).toEqual([...afterOneRun.keys()]);
    // every table that differs, with its first differing row from each side
    const differences: Record<string, unknown> = {};
    for (const [table, rows] of afterOneRun) {
      const other = afterKill.get(table)!;
      const at = rows.findIndex((row, i) => row !== other[i]);
      if (other.length !== rows.length || at !== -1) {
        differences[table] = {
          rows: [other.length, rows.length],
          killedThenRerun: other[at],
          uninterrupted: rows[at],
        };
      }
    }
    expect(differences).toEqual({});
    // the import wrote what the dump holds
    expect(afterOneRun.get("participants")).toHaveLength(PARTICIPANTS);
    expect(afterOneRun.get("survey_responses")).toHaveLength(RESPONSES);
    expect(afterOneRun.get("reports")).toHaveLength(REPORTS);
    expect(afterOneRun.get("profiles")).toHaveLength(USERS * 2 + 1);
  }, 300_000);
});
