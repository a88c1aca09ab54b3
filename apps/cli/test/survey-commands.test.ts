import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, surveyVersions } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { MAX_SURVEY_DEFINITION_BYTES, versionIdPrefix } from "@studyflow/domain/surveys";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { usage } from "../src/index";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;
let dir: string;

/** A CASE Survey as case-editor-tools write it, reduced to what the commands read. */
const caseSurvey = (key: string, extra: Record<string, unknown> = {}) => ({
  versionId: "client-version",
  published: 1_600_000_000,
  props: { name: [{ code: "en", parts: [{ str: `${key} survey` }] }] },
  availableFor: "active_participants",
  surveyDefinition: {
    key,
    items: [{ key: `${key}.Q1`, components: { role: "root", items: [{ role: "title", content: [] }] } }],
  },
  ...extra,
});

async function surveyFile(name: string, content: unknown) {
  await writeFile(join(dir, name), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return name;
}

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "flu" });
  await createStudy(database.db, { key: "empty" });
  dir = await mkdtemp(join(tmpdir(), "survey-commands-"));
});
afterAll(async () => {
  await database.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs a command line as the entry does; returns stdout, stderr, and the exit code it would have. */
const run = (argv: string[]) => runCommandLine(database, argv, dir);

const surveyAudit = async () =>
  database.db
    .select({ actor: auditLog.actor, action: auditLog.action, target: auditLog.target, details: auditLog.details })
    .from(auditLog)
    .where(eq(auditLog.studyKey, "flu"))
    .orderBy(asc(auditLog.id));

describe("survey commands", () => {
  it("are listed in the usage with their flags", () => {
    const text = usage();
    expect(text).toContain("  survey:upload --study KEY --file PATH");
    expect(text).toContain("  survey:list --study KEY");
    expect(text).toContain("  survey:unpublish --study KEY --survey KEY");
  });

  it("survey:upload stores a new published version, audited with the CLI operator as actor", async () => {
    const prefix = versionIdPrefix(new Date());
    const file = await surveyFile("intake.json", caseSurvey("intake"));
    const first = await run(["survey:upload", "--study", "flu", "--file", file, "--json"]);
    expect(first.exitCode).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      studyKey: "flu",
      surveyKey: "intake",
      versionId: `${prefix}1`,
      publishedAt: expect.any(String),
    });
    const second = await run(["survey:upload", "--study", "flu", "--file", join(dir, file)]);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe(`survey "intake" version ${prefix}2 published in study "flu"\n`);
    await run(["survey:upload", "--study", "flu", "--file", await surveyFile("weekly.json", caseSurvey("weekly"))]);

    const stored = await database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, "flu"));
    expect(stored.map((v) => [v.surveyKey, v.versionId, v.publishedBy])).toEqual([
      ["intake", `${prefix}1`, "operator-cli"],
      ["intake", `${prefix}2`, "operator-cli"],
      ["weekly", `${prefix}1`, "operator-cli"],
    ]);
    expect(stored[0]!.definition).not.toHaveProperty("versionId");
    expect(await surveyAudit()).toEqual([
      {
        actor: "operator-cli",
        action: "survey.publish",
        target: "intake",
        details: expect.objectContaining({ versionId: `${prefix}1` }),
      },
      {
        actor: "operator-cli",
        action: "survey.publish",
        target: "intake",
        details: expect.objectContaining({ versionId: `${prefix}2` }),
      },
      {
        actor: "operator-cli",
        action: "survey.publish",
        target: "weekly",
        details: expect.objectContaining({ versionId: `${prefix}1` }),
      },
    ]);
  });

  it("survey:list shows each survey's current version and count", async () => {
    const prefix = versionIdPrefix(new Date());
    const human = await run(["survey:list", "--study", "flu"]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(
      new RegExp(
        `^2 surveys in study "flu"\\nintake  current ${prefix}2 \\(published [^)]+\\)  2 versions\\nweekly  current ${prefix}1 `,
      ),
    );
    const json = JSON.parse((await run(["survey:list", "--study", "flu", "--json"])).stdout);
    expect(json.surveys).toMatchObject([
      { surveyKey: "intake", currentVersionId: `${prefix}2`, versionCount: 2, unpublishedAt: null },
      { surveyKey: "weekly", currentVersionId: `${prefix}1`, versionCount: 1, unpublishedAt: null },
    ]);
    expect(JSON.parse((await run(["survey:list", "--study", "empty", "--json"])).stdout)).toEqual({
      studyKey: "empty",
      surveys: [],
    });
  });

  it("survey:unpublish stamps the survey's versions; again is refused; an upload publishes it again", async () => {
    const done = await run(["survey:unpublish", "--study", "flu", "--survey", "intake", "--json"]);
    expect(done.exitCode).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({
      studyKey: "flu",
      surveyKey: "intake",
      unpublishedAt: expect.any(String),
      versionsUnpublished: 2,
    });
    const listed = JSON.parse((await run(["survey:list", "--study", "flu", "--json"])).stdout);
    expect(listed.surveys[0]).toMatchObject({
      surveyKey: "intake",
      currentVersionId: null,
      unpublishedAt: expect.any(String),
    });
    expect((await run(["survey:list", "--study", "flu"])).stdout).toMatch(
      /intake {2}unpublished since \S+ {2}2 versions/,
    );

    const again = await run(["survey:unpublish", "--study", "flu", "--survey", "intake", "--json"]);
    expect(again.exitCode).toBe(1);
    expect(JSON.parse(again.stderr).error).toMatch(/already unpublished/);

    await run(["survey:upload", "--study", "flu", "--file", "intake.json"]);
    const republished = JSON.parse((await run(["survey:list", "--study", "flu", "--json"])).stdout);
    expect(republished.surveys[0]).toMatchObject({ versionCount: 3, unpublishedAt: null });
    const audit = await surveyAudit();
    expect(audit.map((entry) => entry.action)).toEqual([
      "survey.publish",
      "survey.publish",
      "survey.publish",
      "survey.unpublish",
      "survey.publish",
    ]);
    expect(audit[3]).toMatchObject({ actor: "operator-cli", target: "intake" });
  });

  it("refuses bad files, unknown studies and surveys, and missing flags with exit 1, storing nothing", async () => {
    const before = await database.db.select().from(surveyVersions);
    const oversized = await surveyFile(
      "big.json",
      caseSurvey("big", { metadata: { padding: "x".repeat(MAX_SURVEY_DEFINITION_BYTES) } }),
    );
    const cases: [string[], RegExp][] = [
      [
        ["survey:upload", "--study", "flu", "--file", "missing.json"],
        /cannot read survey file missing\.json: no such file/,
      ],
      [["survey:upload", "--study", "flu", "--file", "."], /cannot read survey file \.: is a directory/],
      [
        ["survey:upload", "--study", "flu", "--file", await surveyFile("bad.json", "{ nope")],
        /bad\.json is not valid JSON/,
      ],
      [["survey:upload", "--study", "flu", "--file", await surveyFile("list.json", [])], /must be a JSON object/],
      [
        [
          "survey:upload",
          "--study",
          "flu",
          "--file",
          await surveyFile("nokey.json", { surveyDefinition: { items: [] } }),
        ],
        /surveyDefinition\.key must be a non-empty string/,
      ],
      [
        [
          "survey:upload",
          "--study",
          "flu",
          "--file",
          await surveyFile("old.json", { current: { versionId: "1", surveyDefinition: { key: "intake" } } }),
        ],
        /older Survey format \(current\/history\)/,
      ],
      [
        [
          "survey:upload",
          "--study",
          "flu",
          "--file",
          await surveyFile("nul.json", caseSurvey("nul", { note: "a\u0000b" })),
        ],
        /survey\.note must not contain a NUL character/,
      ],
      [
        ["survey:upload", "--study", "flu", "--file", oversized],
        /big\.json: survey definition is \d+ bytes serialized; the limit is 1048576 bytes/,
      ],
      [["survey:upload", "--study", "nope", "--file", "intake.json"], /no study "nope"/],
      [["survey:upload", "--study", "flu"], /missing required flag --file/],
      [["survey:list", "--study", "nope"], /no study "nope"/],
      [["survey:unpublish", "--study", "flu", "--survey", "nope"], /survey "nope" not found in study "flu"/],
      [["survey:unpublish", "--study", "flu", "--survey", "a b"], /--survey must be at most 200 characters/],
      [["survey:unpublish", "--study", "flu"], /missing required flag --survey/],
    ];
    for (const [argv, message] of cases) {
      const result = await run([...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(JSON.parse(result.stderr).error, argv.join(" ")).toMatch(message);
      expect(result.stdout).toBe("");
    }
    expect(await database.db.select().from(surveyVersions)).toEqual(before);
  });
});
