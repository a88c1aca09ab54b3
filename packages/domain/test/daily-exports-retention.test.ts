// Daily exports: one task per study, survey and day however many workers start them at once;
// retention: export files past their kind's retention lose their contents and answer downloads
// with an error that says they expired.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dailyExports, storedFileParts, storedFiles, surveyResponses, tasks } from "@studyflow/db";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import {
  createResponseExportTask,
  getDailyExportConfig,
  listDailyExports,
  openDailyExport,
  openTaskFile,
  removeExpiredExportFiles,
  setDailyExportConfig,
  startDailyExports,
  type DailyExportConfigInput,
} from "@studyflow/domain/exports";
import { createFileStore, type FileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { type TaskRow } from "@studyflow/domain/tasks";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2031, 2, 10, 0, 30);
const options: DailyExportConfigInput["options"] = {
  format: "wide",
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
  gzip: false,
};

describe("daily exports and retention", () => {
  let database: TestDatabase;
  let store: FileStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createFileStore(database.db);
    for (const key of ["a", "b"]) {
      await createStudy(database.db, { key });
      for (const surveyKey of ["weekly", "intake"]) {
        const survey = { surveyDefinition: { key: surveyKey, items: [] } };
        await publishSurveyVersion(
          database.db,
          { studyKey: key, actor: "t", survey },
          { clock: () => NOW - 99 * DAY_MS },
        );
      }
    }
    await database.db.insert(surveyResponses).values(
      Array.from({ length: 6 }, (_, i) => ({
        studyKey: "a",
        participantId: `p${i}`,
        key: "weekly",
        arrivedAt: Math.floor((NOW - DAY_MS) / 1000) + i * 600,
      })),
    );
  });
  afterAll(() => database.drop());

  async function run(task: TaskRow) {
    const planned = await planTask(database.db, task.id, { clock: systemClock });
    if (planned.status !== "planned") throw new Error("not planned");
    for (const chunk of planned.chunks)
      await processChunk(database.db, task.id, chunk.chunkIndex, { clock: () => NOW });
    await finalizeIfComplete(database.db, task.id, "/nonexistent", () => NOW);
    const [done] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    return done!;
  }

  it("validates the configuration and stores nothing on a bad one", async () => {
    await expect(
      setDailyExportConfig(database.db, "a", { surveyKeys: ["weekly", "nope"], options, enabled: true }, "r", {
        clock: systemClock,
      }),
    ).rejects.toThrow(new Invalid('surveyKeys.1: no survey "nope" in study "a"'));
    await expect(
      setDailyExportConfig(
        database.db,
        "a",
        { surveyKeys: ["weekly"], options: { ...options, format: "xml" as "wide" }, enabled: true },
        "r",
        { clock: systemClock },
      ),
    ).rejects.toThrow(/^options\.format: /);
    await expect(
      setDailyExportConfig(database.db, "missing", { surveyKeys: [], options, enabled: true }, "r", {
        clock: systemClock,
      }),
    ).rejects.toBeInstanceOf(NotFound);
    expect(await getDailyExportConfig(database.db, "a")).toBeNull();
  });

  it("exports each chosen survey of each study once per day, however many workers start them at once", async () => {
    await setDailyExportConfig(database.db, "a", { surveyKeys: ["weekly", "intake"], options, enabled: true }, "r", {
      clock: systemClock,
    });
    await setDailyExportConfig(database.db, "b", { surveyKeys: ["weekly"], options, enabled: false }, "r", {
      clock: systemClock,
    });
    expect(await getDailyExportConfig(database.db, "a")).toMatchObject({
      surveyKeys: ["weekly", "intake"],
      enabled: true,
    });

    const queued: TaskRow[] = [];
    const queue = (task: TaskRow) => {
      queued.push(task);
      return Promise.resolve();
    };
    const rounds = await Promise.all(
      [1, 2, 3, 4].map(() => startDailyExports(database.db, { clock: systemClock, now: NOW, queue })),
    );
    expect(
      rounds
        .flat()
        .map((started) => `${started.studyKey}/${started.surveyKey}/${started.day}`)
        .sort(),
    ).toEqual(["a/intake/2031-03-09", "a/weekly/2031-03-09"]);
    expect(queued).toHaveLength(2);
    // later the same day: nothing new
    expect(await startDailyExports(database.db, { clock: systemClock, now: NOW + 3_600_000, queue })).toEqual([]);
    expect(await database.db.$count(dailyExports)).toBe(2);

    const weekly = queued.find((task) => (task.input as { surveyKey: string }).surveyKey === "weekly")!;
    expect(weekly).toMatchObject({ createdBy: "daily-export", targetCount: 6 });
    for (const task of queued) expect((await run(task)).status).toBe("completed");

    const listed = await listDailyExports(database.db, "a");
    expect(listed.map((entry) => [entry.surveyKey, entry.date, entry.fileName])).toEqual([
      ["intake", "2031-03-09", "intake_wide_2031-03-09.csv"],
      ["weekly", "2031-03-09", "weekly_wide_2031-03-09.csv"],
    ]);
    expect(await listDailyExports(database.db, "b")).toEqual([]);
    const weeklyEntry = listed.find((entry) => entry.surveyKey === "weekly")!;
    const file = await openDailyExport(database.db, store, "a", weeklyEntry.id);
    expect(file.rows).toBe(6);
    file.body.destroy();
    // another study's id, or no id at all, is not found
    await expect(openDailyExport(database.db, store, "b", weeklyEntry.id)).rejects.toBeInstanceOf(NotFound);
    await expect(openDailyExport(database.db, store, "a", "not-an-id")).rejects.toBeInstanceOf(NotFound);
  });

  it("removes export files past retention, daily ones later than a task's, and says so on download", async () => {
    const adhoc = await run(
      await createResponseExportTask(database.db, "a", { surveyKey: "weekly", ...options }, "r", {
        clock: systemClock,
      }),
    );
    const retention = { taskExportDays: 30, dailyExportDays: 90 };
    // files are stamped with the database's clock when they are created
    const created = Date.now();
    // 31 days on: the task export is past its 30 days; the daily files (90 days) stay
    expect(await removeExpiredExportFiles(database.db, store, { now: created + 31 * DAY_MS, ...retention })).toBe(1);
    const error = await openTaskFile(database.db, store, adhoc).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NotFound);
    expect((error as Error).message).toMatch(/expired on .* and was removed; export again$/);
    const [adhocFile] = await database.db.select().from(storedFiles).where(eq(storedFiles.taskId, adhoc.id));
    expect(await database.db.$count(storedFileParts, eq(storedFileParts.fileId, adhocFile!.id))).toBe(0);
    expect(await listDailyExports(database.db, "a")).toHaveLength(2);
    // a second round finds nothing more to do
    expect(await removeExpiredExportFiles(database.db, store, { now: created + 31 * DAY_MS, ...retention })).toBe(0);

    // 91 days on the daily files go too, and leave the listing
    expect(await removeExpiredExportFiles(database.db, store, { now: created + 91 * DAY_MS, ...retention })).toBe(2);
    expect(await listDailyExports(database.db, "a")).toEqual([]);
    const [row] = await database.db.execute<{ parts: number }>(
      sql`select count(*)::int as parts from stored_file_parts`,
    );
    expect(row?.parts).toBe(0);
  });
});
