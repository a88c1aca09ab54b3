import { access, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Queue } from "bullmq";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dailyExports,
  ruleFailures,
  storedFileParts,
  storedFiles,
  taskChunks,
  tasks,
  type TaskStatus,
} from "@studyflow/db";
import { createFilesystemFileStore, createPostgresFileStore, type FileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import {
  countPrunableTasks,
  pruneFinishedTasks,
  updateStudyTaskRetention,
  type TaskRow,
} from "@studyflow/domain/tasks";
import { MAINTENANCE_QUEUE, createRedisConnection } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { PRUNE_FINISHED_TASKS_EVERY_MS } from "../src/schedules/cluster-schedules";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const DAY = 86_400_000;
const NOW = Date.UTC(2031, 5, 15, 12);
const DEFAULTS = { days: 30, timerDays: 7 };
const daysAgo = (days: number) => new Date(NOW - days * DAY);

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

describe("retention of finished tasks and their files", () => {
  let h: WorkerHarness;
  let files: FileStore;
  let fileDir: string;
  const producer = createRedisConnection(testRedisUrl, "producer");
  let maintenance: Queue;

  beforeAll(async () => {
    h = await createWorkerHarness();
    fileDir = await mkdtemp(path.join(tmpdir(), "sf-retention-files-"));
    files = createFilesystemFileStore(fileDir);
    maintenance = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix: h.prefix });
  });
  afterAll(async () => {
    await h.close();
    await maintenance.close();
    producer.disconnect();
  });

  /** A task row that finished (or not) `days` ago, with a result document when it is a rule run. */
  async function task(
    studyKey: string,
    days: number,
    status: TaskStatus,
    kind: "run-actions" | "timer" | "export-responses" = "run-actions",
  ): Promise<TaskRow> {
    const at = daysAgo(days);
    const finished = ["completed", "failed", "canceled", "skipped"].includes(status);
    const input =
      kind === "timer"
        ? {
            dueAt: at.toISOString(),
            rulesVersion: 1,
            intervalSeconds: 3_600,
            offsetSeconds: 0,
            defaultInterval: true,
          }
        : kind === "run-actions"
          ? { rules: [], dryRun: false }
          : { gzip: false };
    const row = await h.insertTaskRow(studyKey, {
      kind,
      input: input as TaskRow["input"],
      status,
      createdAt: at,
      updatedAt: at,
      ...(finished ? { finishedAt: at } : {}),
    });
    if (kind !== "export-responses" && status === "completed") {
      const relative = path.join(encodeURIComponent(studyKey), `${row.id}.json`);
      await mkdir(path.join(h.resultDir, encodeURIComponent(studyKey)), { recursive: true });
      await writeFile(path.join(h.resultDir, relative), "{}\n");
      await h.database.db.update(tasks).set({ resultFile: relative }).where(eq(tasks.id, row.id));
      return { ...row, resultFile: relative };
    }
    return row;
  }

  /** An export file of a task, in the filesystem store; `expired` as export retention leaves it. */
  async function exportFile(exportTask: TaskRow, expired: boolean) {
    const file = await files.create(h.database.db, {
      studyKey: exportTask.studyKey,
      taskId: exportTask.id,
      name: "export.csv",
      contentType: "text/csv",
      gzip: false,
    });
    await files.writePart(h.database.db, file, { chunkIndex: 0, seq: 0 }, "a,b\n", { rows: 1 });
    await files.complete(h.database.db, file.id, 1);
    if (expired) {
      await files.removeContents(h.database.db, file);
      await h.database.db
        .update(storedFiles)
        .set({ expiredAt: daysAgo(1) })
        .where(eq(storedFiles.id, file.id));
    }
    return file;
  }

  const idsLeft = async (studyKey: string) =>
    (await h.database.db.select({ id: tasks.id }).from(tasks).where(eq(tasks.studyKey, studyKey))).map((r) => r.id);

  it("removes finished tasks past retention with their result documents, chunks and export files; keeps the rest", async () => {
    await createStudy(h.database.db, { key: "flu" });
    const oldDone = await task("flu", 31, "completed");
    const oldFailed = await task("flu", 45, "failed");
    const oldCanceled = await task("flu", 40, "canceled");
    const recentDone = await task("flu", 29, "completed");
    // Never a task that has not finished, however old.
    const oldQueued = await task("flu", 90, "queued");
    const oldRunning = await task("flu", 90, "in_progress");
    await h.database.db.insert(taskChunks).values([
      { taskId: oldDone.id, chunkIndex: 0, fromKey: "", cursor: "" },
      { taskId: oldRunning.id, chunkIndex: 0, fromKey: "", cursor: "" },
    ]);
    // A rule failure of a removed task stays (researchers' record) with its task set to null.
    await h.database.db.insert(ruleFailures).values({
      studyKey: "flu",
      participantId: "p1",
      eventType: "CUSTOM",
      taskId: oldDone.id,
      ruleIndex: 0,
      path: "rules[0]",
      message: "boom",
      outcome: "rule-skipped",
    });
    // Ticks: 7 days by default; the latest one stays whatever its age.
    const oldTick = await task("flu", 8, "completed", "timer");
    const oldSkipped = await task("flu", 9, "skipped", "timer");
    const recentTick = await task("flu", 6, "completed", "timer");
    // Exports: the task waits until its file's contents expired (export retention), then both go.
    const expiredExport = await task("flu", 60, "completed", "export-responses");
    const expiredFile = await exportFile(expiredExport, true);
    const keptExport = await task("flu", 60, "completed", "export-responses");
    const keptFile = await exportFile(keptExport, false);
    // A daily export's day stays claimed once its task is gone.
    await h.database.db
      .insert(dailyExports)
      .values({ studyKey: "flu", surveyKey: "weekly", day: "2031-04-01", taskId: expiredExport.id });

    const planned = await countPrunableTasks(h.database.db, { now: NOW, defaults: DEFAULTS, studyKey: "flu" });
    expect(planned).toEqual({
      studies: [{ studyKey: "flu", days: 30, timerDays: 7, tasks: 4, timerTicks: 2, files: 1 }],
      tasks: 4,
      timerTicks: 2,
      files: 1,
      finished: true,
    });
    expect(await idsLeft("flu")).toHaveLength(11);

    const progress: number[] = [];
    const summary = await pruneFinishedTasks(h.database.db, {
      clock: systemClock,
      now: NOW,
      defaults: DEFAULTS,
      resultDir: h.resultDir,
      files,
      batchSize: 2,
      onProgress: (removed) => progress.push(removed),
    });
    expect(summary).toEqual(planned);
    expect(progress.at(-1)).toBe(6);
    expect((await idsLeft("flu")).sort()).toEqual(
      [recentDone, oldQueued, oldRunning, recentTick, keptExport].map((t) => t.id).sort(),
    );
    expect(await exists(path.join(h.resultDir, oldDone.resultFile))).toBe(false);
    expect(await exists(path.join(h.resultDir, oldTick.resultFile))).toBe(false);
    expect(await exists(path.join(h.resultDir, recentDone.resultFile))).toBe(true);
    expect(await exists(path.join(h.resultDir, recentTick.resultFile))).toBe(true);
    expect((await h.database.db.select().from(taskChunks)).map((c) => c.taskId)).toEqual([oldRunning.id]);
    const [failure] = await h.database.db.select().from(ruleFailures);
    expect(failure).toMatchObject({ message: "boom", taskId: null });
    const fileIds = (await h.database.db.select({ id: storedFiles.id }).from(storedFiles)).map((f) => f.id);
    expect(fileIds).toEqual([keptFile.id]);
    expect(await exists(path.join(fileDir, "files", expiredFile.id))).toBe(false);
    expect(await exists(path.join(fileDir, "files", keptFile.id))).toBe(true);
    expect(await h.database.db.select().from(dailyExports)).toEqual([
      expect.objectContaining({ day: "2031-04-01", taskId: null }),
    ]);
    void oldFailed;
    void oldCanceled;
    void oldSkipped;

    // A second round finds nothing: the job is idempotent.
    const again = await pruneFinishedTasks(h.database.db, {
      clock: systemClock,
      now: NOW,
      defaults: DEFAULTS,
      resultDir: h.resultDir,
      files,
    });
    expect(again).toEqual({ studies: [], tasks: 0, timerTicks: 0, files: 0, finished: true });
  });

  it("a study's own retention wins over the defaults; 0 keeps forever, per kind", async () => {
    for (const key of ["longer", "forever", "shorter", "defaults"]) await createStudy(h.database.db, { key });
    await updateStudyTaskRetention(h.database.db, "longer", { days: 90 }, "tester", DEFAULTS, new Date());
    await updateStudyTaskRetention(h.database.db, "forever", { days: 0, timerDays: 0 }, "tester", DEFAULTS, new Date());
    await updateStudyTaskRetention(h.database.db, "shorter", { days: 2, timerDays: 1 }, "tester", DEFAULTS, new Date());
    const rows: Record<string, TaskRow[]> = {};
    for (const key of ["longer", "forever", "shorter", "defaults"]) {
      rows[key] = [
        await task(key, 60, "completed"),
        await task(key, 3, "completed"),
        await task(key, 20, "completed", "timer"),
        await task(key, 2.5, "completed", "timer"),
        await task(key, 0.5, "completed", "timer"),
      ];
    }
    const summary = await pruneFinishedTasks(h.database.db, {
      clock: systemClock,
      now: NOW,
      defaults: DEFAULTS,
      resultDir: h.resultDir,
      files,
    });
    // (the first test's study has nothing left past retention)
    expect(
      summary.studies.map(({ studyKey, days, timerDays, tasks, timerTicks }) => [
        studyKey,
        days,
        timerDays,
        tasks,
        timerTicks,
      ]),
    ).toEqual([
      ["defaults", 30, 7, 1, 1],
      ["longer", 90, 7, 0, 1],
      ["shorter", 2, 1, 2, 2],
    ]);
    const left = async (key: string) => {
      const ids = await idsLeft(key);
      return rows[key]!.map((row) => ids.includes(row.id));
    };
    expect(await left("longer")).toEqual([true, true, false, true, true]);
    expect(await left("forever")).toEqual([true, true, true, true, true]);
    expect(await left("shorter")).toEqual([false, false, false, false, true]);
    expect(await left("defaults")).toEqual([false, true, false, true, true]);

    // Global 0 ("off") keeps everything of that kind, unless a study sets its own.
    await task("defaults", 400, "completed");
    await task("defaults", 400, "completed", "timer");
    const shorterOld = await task("shorter", 400, "completed");
    const off = await pruneFinishedTasks(h.database.db, {
      clock: systemClock,
      now: NOW,
      defaults: { days: 0, timerDays: 0 },
      resultDir: h.resultDir,
      files,
    });
    expect(off.studies.map((s) => s.studyKey)).toEqual(["shorter"]);
    expect(await idsLeft("defaults")).toHaveLength(5);
    expect(await idsLeft("shorter")).not.toContain(shorterOld.id);
  });

  it("a round stops when its time budget is spent, and the next one goes on", async () => {
    await createStudy(h.database.db, { key: "backlog" });
    for (let i = 0; i < 5; i += 1) await task("backlog", 100 + i, "completed");
    let now = 0;
    const clock = () => (now += 10);
    const options = {
      now: NOW,
      defaults: DEFAULTS,
      resultDir: h.resultDir,
      files: createPostgresFileStore(h.database.db),
      studyKey: "backlog",
      batchSize: 2,
      maxDurationMs: 25,
      clock,
    };
    const first = await pruneFinishedTasks(h.database.db, options);
    expect(first).toMatchObject({ tasks: 4, finished: false });
    now = 0;
    const second = await pruneFinishedTasks(h.database.db, options);
    expect(second).toMatchObject({ tasks: 1, finished: true });
    expect(await idsLeft("backlog")).toEqual([]);
  });

  it("runs once per cluster on the maintenance queue's prune-finished-tasks scheduler", async () => {
    await createStudy(h.database.db, { key: "scheduled" });
    const old = await task("scheduled", 31, "completed");
    const recent = await task("scheduled", 1, "completed");
    const replicas = [1, 2].map(() =>
      h.start({ maintenance: true, clock: () => NOW, taskRetention: DEFAULTS, fileStore: "postgres" }),
    );
    await Promise.all(replicas.map((replica) => replica.schedulesReady));
    const scheduler = (await maintenance.getJobSchedulers()).find((s) => s.key === "prune-finished-tasks");
    expect(scheduler?.every).toBe(PRUNE_FINISHED_TASKS_EVERY_MS);

    const deadline = Date.now() + 15_000;
    let done = (await maintenance.getJobs(["completed"])).filter((job) => job.name === "prune-finished-tasks");
    while (done.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      done = (await maintenance.getJobs(["completed"])).filter((job) => job.name === "prune-finished-tasks");
    }
    expect(done).toHaveLength(1);
    // (other tests' studies: the 400-day-old tasks kept while the defaults were "off" go now)
    expect(done[0]!.returnvalue).toMatchObject({
      finished: true,
      byStudy: { scheduled: { tasks: 1, timerTicks: 0, files: 0 } },
    });
    expect(await idsLeft("scheduled")).toEqual([recent.id]);
    const gone = await h.database.db
      .select()
      .from(tasks)
      .where(inArray(tasks.id, [old.id]));
    expect(gone).toEqual([]);
    expect(await h.database.db.select().from(storedFileParts)).toEqual([]);
  });
});
