/**
 * `import:case` over a dump written as mongodump writes case-backend's databases (fixtures in
 * packages/domain/test/case-import/case-dump.ts): progress per collection, the report file of
 * what was not imported, the exit code, a rerun that changes nothing and a dry run that writes
 * nothing.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, users } from "@studyflow/db";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseParticipant,
  caseStudy,
  caseSurvey,
  caseUser,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { runCommandLine } from "./run-command-line";

const HASH = "$argon2id$v=19$m=65536,t=4,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U";

describe("import:case", () => {
  let database: TestDatabase;
  let dir: string;
  const bad = { ...caseParticipant(""), _id: new ObjectId("65a0000000000000000000bb") };

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "import-case-cli-"));
    await writeCaseDump(join(dir, "dump"), {
      instance: "nl",
      gzip: true,
      databases: {
        studyDB: {
          "study-infos": [caseStudy("ticks")],
          ticks_surveys: [caseSurvey("intake", "v1", 1_700_000_000)],
          ticks_participants: [caseParticipant("p-1"), bad, caseParticipant("p-2")],
        },
        users: { users: [caseUser("kim@example.org", HASH, [new ObjectId()])] },
      },
    });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const count = async (table: typeof participants | typeof users) =>
    Number((await database.db.execute<{ n: string }>(sql`select count(*) as n from ${table}`))[0]!.n);

  it("--dry-run counts and reports, writes nothing, and exits 1 for the skipped document", async () => {
    const result = await runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--dry-run", "--report", "dry.jsonl", "--json"],
      dir,
    );
    expect(result.exitCode).toBe(1);
    const summary = JSON.parse(result.stdout) as { dryRun: boolean; changed: number; problems: number };
    expect(summary).toMatchObject({ dryRun: true, changed: 5, problems: 1 });
    expect(await count(participants)).toBe(0);
    expect(await count(users)).toBe(0);
  });

  it("imports, shows a progress line per collection, and lists the bad document in the report", async () => {
    const lines: string[] = [];
    const result = await runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--report", "report.jsonl"],
      dir,
      { progress: { write: (text) => lines.push(text), isTTY: false } },
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/1 document\(s\) or file\(s\) were not imported; see .*report\.jsonl/);
    expect(result.stdout).toMatch(/nl_studyDB\/ticks_participants\s+3\s+2\s+0\s+0\s+1/);
    for (const collection of ["study-infos", "ticks_surveys", "ticks_participants", "users"]) {
      expect(lines.join("")).toContain(`import nl_`);
      expect(lines.some((line) => line.includes(`/${collection}: `) && line.includes("kB (gzip)"))).toBe(true);
    }
    const report = (await readFile(join(dir, "report.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    expect(report).toEqual([
      {
        database: "nl_studyDB",
        collection: "ticks_participants",
        id: "65a0000000000000000000bb",
        reason: "the participant has no participantID",
      },
    ]);
    expect(await count(participants)).toBe(2);
    const [account] = await database.db.select().from(users).where(eq(users.email, "kim@example.org"));
    expect(account?.passwordHash).toBe(HASH);
  });

  it("a rerun changes nothing and says so", async () => {
    const result = await runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--report", "again.jsonl", "--only", "users"],
      dir,
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("nothing changed");
    expect(result.stdout).toContain("no problems");
    const json = await runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--report", "again.jsonl", "--json"],
      dir,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ changed: 0, problems: 1 });
  });

  it("a newer dump without an account: reported and kept, --prune removes it and says so", async () => {
    await writeCaseDump(join(dir, "newer"), {
      instance: "nl",
      databases: { users: { users: [caseUser("lou@example.org", HASH, [new ObjectId()])] } },
    });
    const args = ["import:case", "--dump", "newer", "--instance", "nl", "--only", "users"];
    const reported = await runCommandLine(database, [...args, "--report", "newer.jsonl"], dir);
    expect(reported.exitCode).toBe(1);
    const report = (await readFile(join(dir, "newer.jsonl"), "utf8")).trim().split("\n");
    expect(report).toHaveLength(1);
    expect(JSON.parse(report[0]!)).toMatchObject({
      collection: "users",
      reason: expect.stringContaining("--prune removes it") as unknown,
    });
    expect((await database.db.select().from(users)).map((u) => u.email).sort()).toEqual([
      "kim@example.org",
      "lou@example.org",
    ]);

    const pruned = await runCommandLine(database, [...args, "--prune", "--report", "pruned.jsonl"], dir);
    expect(pruned.exitCode).toBe(0);
    expect(pruned.stdout).toMatch(/nl_users\/users\s+1\s+0\s+0\s+1\s+0\s+0\s+1/);
    expect(pruned.stdout).toContain("0 document(s) written and 1 row(s) the dump no longer has removed");
    expect((await database.db.select().from(users)).map((u) => u.email)).toEqual(["lou@example.org"]);
  });

  it("refuses a dump without the instance's databases, and unknown parts", async () => {
    const missing = await runCommandLine(database, ["import:case", "--dump", "dump", "--instance", "de"], dir);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("de_studyDB/study-infos");
    const parts = await runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--only", "files"],
      dir,
    );
    expect(parts.exitCode).toBe(1);
  });
});
