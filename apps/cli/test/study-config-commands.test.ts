import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyCodeLists, studyVariables } from "@studyflow/db";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, onEvent, str, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;
let workingDirectory: string;

const kitRules = [onEvent("ENTER", call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("kit-codes"), str("kit")))];

beforeAll(async () => {
  database = await createTestDatabase();
  workingDirectory = await mkdtemp(join(tmpdir(), "studyflow-study-config-"));
  await createStudy(database.db, { key: "flu-watch" });
  await setStudyRules(database.db, "flu-watch", kitRules, "test");
});
afterAll(async () => {
  await database.drop();
  await rm(workingDirectory, { recursive: true, force: true });
});

/** Runs a command line as the entry does; returns stdout, stderr, and the exit code it would have. */
const run = (argv: string[]) => runCommandLine(database, argv, workingDirectory);

/** Runs with --json and returns the parsed result, failing the test on any error. */
async function json<T = Record<string, any>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** Each argv must fail with exit code 1 and a message matching its pattern, printing nothing on stdout. */
async function expectRefused(cases: [string[], RegExp][]) {
  for (const [argv, message] of cases) {
    const result = await run([...argv, "--json"]);
    expect(result.exitCode, argv.join(" ")).toBe(1);
    expect(JSON.parse(result.stderr).error, argv.join(" ")).toMatch(message);
    expect(result.stdout).toBe("");
  }
}

const auditActions = async () =>
  (await database.db.select().from(auditLog).where(eq(auditLog.studyKey, "flu-watch")).orderBy(auditLog.id)).map(
    (e) => `${e.actor} ${e.action}`,
  );

describe("study:show and study:update", () => {
  it("updates names, tags, start date, time zone and status, and shows the study", async () => {
    const updated = await json([
      "study:update",
      "--key",
      "flu-watch",
      "--name",
      "en=Flu watch",
      "--name",
      "de=Grippe-Radar",
      "--description",
      "en=Weekly symptoms; one kit per household.",
      "--tags",
      "influenza, cohort",
      "--start-date",
      "2026-11-01",
      "--time-zone",
      "Europe/Berlin",
      "--status",
      "inactive",
    ]);
    expect(updated.study).toMatchObject({
      key: "flu-watch",
      status: "inactive",
      props: {
        name: { en: "Flu watch", de: "Grippe-Radar" },
        description: { en: "Weekly symptoms; one kit per household." },
        tags: ["influenza", "cohort"],
        startDate: "2026-11-01",
      },
      config: { timeZone: "Europe/Berlin" },
      currentRulesVersion: 1,
    });
    expect(updated.study).not.toHaveProperty("secret");

    const shown = await run(["study:show", "--key", "flu-watch"]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(/^study "flu-watch"\n/);
    expect(shown.stdout).toMatch(/status\s+inactive \(participant events are refused\)/);
    expect(shown.stdout).toMatch(/name\s+de: Grippe-Radar; en: Flu watch/);
    expect(shown.stdout).toMatch(/tags\s+influenza, cohort/);
    expect(shown.stdout).toMatch(/time zone\s+Europe\/Berlin/);
    expect(shown.stdout).toMatch(/rules version\s+1/);

    const cleared = await json([
      "study:update",
      "--key",
      "flu-watch",
      "--clear",
      "tags,time-zone",
      "--status",
      "active",
      "--track-account",
      "on",
    ]);
    expect(cleared.study.trackAccount).toBe(true);
    expect(cleared.study.props.tags).toBeUndefined();
    expect(cleared.study.config.timeZone).toBeUndefined();
    expect(cleared.study.status).toBe("active");
    expect(await auditActions()).toEqual([
      "test rules.set",
      "operator-cli study.props.update",
      "operator-cli study.config.update",
      "operator-cli study.status.update",
      "operator-cli study.props.update",
      "operator-cli study.config.update",
      "operator-cli study.status.update",
      "operator-cli study.track-account.update",
    ]);
  });

  it("refuses bad values, unknown studies and an update without changes (exit 1)", async () => {
    await expectRefused([
      [["study:update", "--key", "flu-watch"], /give at least one of --name/],
      [["study:update", "--key", "flu-watch", "--name", "Flu watch"], /--name takes LANG=TEXT/],
      [["study:update", "--key", "flu-watch", "--name", "en=A", "--name", "en=B"], /--name gives language "en" twice/],
      [["study:update", "--key", "flu-watch", "--name", "en="], /name\.en: must not be empty/],
      [["study:update", "--key", "flu-watch", "--start-date", "2026-02-30"], /startDate: "2026-02-30" is not a date/],
      [["study:update", "--key", "flu-watch", "--time-zone", "Mars/Olympus"], /unknown time zone "Mars\/Olympus"/],
      [["study:update", "--key", "flu-watch", "--status", "paused"], /--status must be one of active, inactive/],
      [["study:update", "--key", "flu-watch", "--track-account", "yes"], /--track-account must be one of on, off/],
      [["study:update", "--key", "flu-watch", "--clear", "colour"], /--clear must be one of name, description/],
      [["study:update", "--key", "flu-watch", "--tags", "a", "--clear", "tags"], /--tags and --clear tags contradict/],
      [["study:update", "--key", "nope", "--status", "active"], /study "nope" not found/],
      [["study:show", "--key", "nope"], /study "nope" not found/],
    ]);
  });
});

describe("code lists", () => {
  it("adds codes with --code and from a file, skipping codes present, and lists, counts and removes them", async () => {
    const one = await json(["code-list:add", "--study", "flu-watch", "--list", "kit-codes", "--code", "KIT-0001"]);
    expect(one).toEqual({ studyKey: "flu-watch", listKey: "kit-codes", added: 1, skipped: [], codeCount: 1 });

    await writeFile(join(workingDirectory, "kits.txt"), "KIT-0001\nKIT-0002\r\n\n  KIT-0003  \nKIT-0002\n");
    const fromFile = await run(["code-list:add", "--study", "flu-watch", "--list", "kit-codes", "--file", "kits.txt"]);
    expect(fromFile.exitCode).toBe(0);
    expect(fromFile.stdout).toBe(
      '2 codes added to list "kit-codes" of study "flu-watch"\n' +
        "skipped        KIT-0001, KIT-0002 (already in the list or given twice)\n" +
        "codes in list  3\n",
    );
    const rows = await database.db.select().from(studyCodeLists).orderBy(studyCodeLists.id);
    expect(rows.map((row) => row.code)).toEqual(["KIT-0001", "KIT-0002", "KIT-0003"]);

    await json(["code-list:add", "--study", "flu-watch", "--list", "welcome", "--code", "W-1", "--code", "W-2"]);
    expect((await json(["code-list:list", "--study", "flu-watch"])).codeLists).toEqual([
      { listKey: "kit-codes", codeCount: 3 },
      { listKey: "welcome", codeCount: 2 },
    ]);
    const firstPage = await json<{ codes: { code: string }[]; nextCursor: string }>([
      "code-list:list",
      "--study",
      "flu-watch",
      "--list",
      "kit-codes",
      "--limit",
      "2",
    ]);
    expect(firstPage.codes.map((c) => c.code)).toEqual(["KIT-0001", "KIT-0002"]);
    const secondPage = await json([
      "code-list:list",
      "--study",
      "flu-watch",
      "--list",
      "kit-codes",
      "--cursor",
      firstPage.nextCursor,
    ]);
    expect(secondPage).toMatchObject({ codes: [{ code: "KIT-0003" }], nextCursor: null });

    const removed = await run([
      "code-list:remove",
      "--study",
      "flu-watch",
      "--list",
      "kit-codes",
      "--code",
      "KIT-0002",
    ]);
    expect(removed.stdout).toBe('code "KIT-0002" removed from list "kit-codes" of study "flu-watch"\n');
    expect(await json(["code-list:count", "--study", "flu-watch", "--list", "kit-codes"])).toEqual({
      studyKey: "flu-watch",
      listKey: "kit-codes",
      codeCount: 2,
    });
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.target, "kit-codes"));
    expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
      ["operator-cli", "code-list.add", { added: 1, skipped: 0 }],
      ["operator-cli", "code-list.add", { added: 2, skipped: 2 }],
      ["operator-cli", "code-list.remove", { code: "KIT-0002" }],
    ]);
  });

  it("refuses a bad file, both or neither of --code and --file, an absent code and a bad cursor (exit 1)", async () => {
    await writeFile(join(workingDirectory, "empty.txt"), "\n  \n");
    await writeFile(join(workingDirectory, "long.txt"), `KIT-1\n${"x".repeat(257)}\n`);
    const add = ["code-list:add", "--study", "flu-watch", "--list", "kit-codes"];
    await expectRefused([
      [[...add], /give --code or --file/],
      [[...add, "--code", "A", "--file", "kits.txt"], /give --code or --file/],
      [[...add, "--file", "missing.txt"], /cannot read codes file missing\.txt: no such file/],
      [[...add, "--file", "empty.txt"], /empty\.txt holds no codes/],
      [[...add, "--file", "long.txt"], /long\.txt line 2: the code is longer than 256 characters/],
      [[...add, "--code", " "], /codes\[0\]: must not be empty/],
      [["code-list:add", "--study", "nope", "--list", "kit-codes", "--code", "A"], /study "nope" not found/],
      [
        ["code-list:remove", "--study", "flu-watch", "--list", "kit-codes", "--code", "KIT-9999"],
        /code "KIT-9999" is not in code list "kit-codes"/,
      ],
      [["code-list:list", "--study", "flu-watch", "--list", "kit-codes", "--cursor", "abc"], /cursor is not one/],
      [["code-list:list", "--study", "flu-watch", "--limit", "0"], /--limit must be a whole number from 1 to 1000/],
    ]);
    expect(await json(["code-list:count", "--study", "flu-watch", "--list", "kit-codes"])).toMatchObject({
      codeCount: 2,
    });
  });
});

describe("study variables", () => {
  it("defines, sets, lists and deletes variables, reading each value as its type", async () => {
    const defined = await json([
      "variable:set",
      "--study",
      "flu-watch",
      "--key",
      "kitStock",
      "--type",
      "int",
      "--value",
      "250",
    ]);
    expect(defined).toMatchObject({ created: true, variable: { key: "kitStock", type: "int", value: 250 } });
    // the type of an existing variable reads the value
    const set = await run(["variable:set", "--study", "flu-watch", "--key", "kitStock", "--value", "249"]);
    expect(set.stdout).toBe('study variable "kitStock" set in study "flu-watch"\ntype   int\nvalue  249\n');
    await json([
      "variable:set",
      "--study",
      "flu-watch",
      "--key",
      "campaignStart",
      "--type",
      "date",
      "--value",
      "2026-11-01",
    ]);
    await json(["variable:set", "--study", "flu-watch", "--key", "recruiting", "--type", "boolean", "--value", "true"]);
    await json(["variable:set", "--study", "flu-watch", "--key", "returnRate", "--type", "float", "--value", "0.85"]);
    await json(["variable:set", "--study", "flu-watch", "--key", "lab", "--type", "string", "--value", "Labor Nord"]);

    const rows = await database.db
      .select({ key: studyVariables.key, type: studyVariables.type, value: studyVariables.value })
      .from(studyVariables)
      .orderBy(studyVariables.key);
    expect(rows).toEqual([
      { key: "campaignStart", type: "date", value: 1_793_491_200 },
      { key: "kitStock", type: "int", value: 249 },
      { key: "lab", type: "string", value: "Labor Nord" },
      { key: "recruiting", type: "boolean", value: true },
      { key: "returnRate", type: "float", value: 0.85 },
    ]);
    const listed = await run(["variable:list", "--study", "flu-watch"]);
    expect(listed.stdout).toContain("campaignStart  date     1793491200 (2026-11-01T00:00:00.000Z)");
    expect(listed.stdout).toContain('lab            string   "Labor Nord"');

    const deleted = await run(["variable:delete", "--study", "flu-watch", "--key", "recruiting"]);
    expect(deleted.stdout).toBe('study variable "recruiting" deleted from study "flu-watch"\n');
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.target, "kitStock"));
    expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
      ["operator-cli", "variable.define", { type: "int", value: 250 }],
      ["operator-cli", "variable.set", { type: "int", value: 249, previous: { type: "int", value: 250 } }],
    ]);
  });

  it("refuses values not of the type, a new variable without --type and unknown variables (exit 1)", async () => {
    const set = ["variable:set", "--study", "flu-watch"];
    await expectRefused([
      [[...set, "--key", "kitStock", "--value", "lots"], /--value: an int variable takes a whole number.*got "lots"/],
      [[...set, "--key", "kitStock", "--value", "2.5"], /--value: an int variable takes a whole number/],
      [[...set, "--key", "returnRate", "--value", "high"], /--value: a float variable takes a finite number/],
      [[...set, "--key", "campaignStart", "--value", "soon"], /--value: a date variable takes Unix seconds/],
      [[...set, "--key", "newOne", "--value", "1"], /study variable "newOne" does not exist yet: give --type/],
      [[...set, "--key", "newOne", "--type", "decimal", "--value", "1"], /--type must be one of string, int/],
      [["variable:delete", "--study", "flu-watch", "--key", "newOne"], /study variable "newOne" not found/],
      [["variable:list", "--study", "nope"], /study "nope" not found/],
    ]);
  });
});

describe("rules:list, rules:show and audit-log:list", () => {
  it("lists the rules versions and prints one as JSON that study:set-rules takes back", async () => {
    await setStudyRules(database.db, "flu-watch", [...kitRules, ...kitRules], "researcher-ana");
    const listed = await json(["rules:list", "--study", "flu-watch"]);
    expect(listed.versions).toEqual([
      { version: 2, uploadedBy: "researcher-ana", uploadedAt: expect.any(String), ruleCount: 2 },
      { version: 1, uploadedBy: "test", uploadedAt: expect.any(String), ruleCount: 1 },
    ]);
    const shown = await run(["rules:show", "--study", "flu-watch", "--version", "1"]);
    const [header, ...rest] = shown.stdout.split("\n");
    expect(header).toMatch(/^rules version 1 of study "flu-watch", uploaded .* by test$/);
    expect(JSON.parse(rest.join("\n"))).toEqual(kitRules);
    expect((await json(["rules:show", "--study", "flu-watch"])).version).toBe(2);
    await expectRefused([
      [["rules:show", "--study", "flu-watch", "--version", "9"], /rules version 9 not found/],
      [["rules:show", "--study", "flu-watch", "--version", "latest"], /--version must be a version number or current/],
      [["rules:list", "--study", "nope"], /study "nope" not found/],
    ]);
  });

  it("lists the audit log newest first, a page at a time", async () => {
    type AuditPage = { entries: { action: string; target: string }[]; nextCursor: string };
    const first = await json<AuditPage>(["audit-log:list", "--study", "flu-watch", "--limit", "2"]);
    expect(first.entries.map((e) => e.action)).toEqual(["rules.set", "variable.delete"]);
    expect(first.entries[0]).toMatchObject({
      actor: "researcher-ana",
      target: "2",
      details: { version: 2, ruleCount: 2 },
    });
    const second = await json<AuditPage>([
      "audit-log:list",
      "--study",
      "flu-watch",
      "--limit",
      "2",
      "--cursor",
      first.nextCursor,
    ]);
    expect(second.entries.map((e) => e.target)).toEqual(["lab", "returnRate"]);
    const text = await run(["audit-log:list", "--study", "flu-watch", "--limit", "1"]);
    expect(text.stdout).toMatch(
      /^1 change to study "flu-watch" \(newest first\)\n\S+Z {2}researcher-ana {2}rules\.set 2 {2}\{"version":2,"ruleCount":2\}\nmore: --cursor \S+\n$/,
    );
    await expectRefused([
      [["audit-log:list", "--study", "flu-watch", "--cursor", "abc"], /cursor is not one/],
      [["audit-log:list", "--study", "nope"], /study "nope" not found/],
    ]);
  });
});
