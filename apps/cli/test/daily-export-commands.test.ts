import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, dailyExportConfigs } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { usage } from "../src/index";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;

const survey = (key: string) => ({
  surveyDefinition: {
    key,
    items: [{ key: `${key}.Q1`, components: { role: "root", items: [{ role: "title", content: [] }] } }],
  },
});

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "flu" });
  for (const key of ["weekly", "intake"]) {
    await publishSurveyVersion(
      database.db,
      { studyKey: "flu", actor: "operator-cli", survey: survey(key) },
      { clock: Date.now },
    );
  }
});
afterAll(async () => {
  await database.drop();
});

const run = (argv: string[]) => runCommandLine(database, argv);
const stored = () => database.db.select().from(dailyExportConfigs);

describe("daily-export commands", () => {
  it("are listed in the usage", () => {
    const text = usage();
    expect(text).toContain("daily-export:set --study KEY --surveys KEYS");
    expect(text).toContain("daily-export:show --study KEY");
  });

  it("show says when a study has no daily export", async () => {
    expect(await run(["daily-export:show", "--study", "flu"])).toMatchObject({
      exitCode: 0,
      stdout: 'study "flu" has no daily export\n',
    });
    expect(JSON.parse((await run(["daily-export:show", "--study", "flu", "--json"])).stdout)).toEqual({
      dailyExport: null,
    });
  });

  it("set stores the surveys and options (CASE's defaults), audited; --off stops it", async () => {
    const set = await run(["daily-export:set", "--study", "flu", "--surveys", "weekly,intake", "--gzip", "--json"]);
    expect(set.exitCode).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      dailyExport: {
        studyKey: "flu",
        surveyKeys: ["weekly", "intake"],
        enabled: true,
        options: { format: "wide", questionOptionSep: "-", shortKeys: false, extraContextColumns: [], gzip: true },
        updatedBy: "operator-cli",
      },
    });
    const shown = await run(["daily-export:show", "--study", "flu"]);
    expect(shown.stdout).toContain('daily export of study "flu"');
    expect(shown.stdout).toMatch(/surveys\s+weekly, intake/);
    expect(shown.stdout).toMatch(/format\s+wide, gzip/);

    const off = await run(["daily-export:set", "--study", "flu", "--surveys", "weekly", "--format", "long", "--off"]);
    expect(off.exitCode).toBe(0);
    expect(off.stdout).toMatch(/state\s+off/);
    const [row] = await stored();
    expect(row).toMatchObject({ enabled: false, surveyKeys: ["weekly"], options: { format: "long", gzip: false } });
    const audited = await database.db.select().from(auditLog).where(eq(auditLog.action, "daily-export.update"));
    expect(audited.map((entry) => [entry.studyKey, entry.actor])).toEqual([
      ["flu", "operator-cli"],
      ["flu", "operator-cli"],
    ]);
  });

  it("refuses an unknown survey, study or format with one line and exit 1, changing nothing", async () => {
    const before = await stored();
    expect(await run(["daily-export:set", "--study", "flu", "--surveys", "nope"])).toMatchObject({
      exitCode: 1,
      stderr: 'error: surveyKeys.0: no survey "nope" in study "flu"\n',
    });
    const badFormat = await run(["daily-export:set", "--study", "flu", "--surveys", "weekly", "--format", "xlsx"]);
    expect(badFormat.exitCode).toBe(1);
    expect(badFormat.stderr).toContain("--format");
    const absent = await run(["daily-export:show", "--study", "absent"]);
    expect(absent.exitCode).toBe(1);
    expect(absent.stderr).toContain("absent");
    expect(await stored()).toEqual(before);
  });
});
