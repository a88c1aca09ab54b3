import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, tasks } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runWithSettings } from "./run-with-settings";

const DAY = 86_400_000;

let database: TestDatabase;
let resultDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  resultDir = await mkdtemp(path.join(tmpdir(), "sf-cli-retention-"));
  await createStudy(database.db, { key: "flu" });
  await createStudy(database.db, { key: "kept" });
});
afterAll(async () => {
  await database.drop();
});

const SETTINGS = { TASK_RETENTION_DAYS: "30", TIMER_TASK_RETENTION_DAYS: "7" };
const run = (argv: string[], env: Record<string, string> = SETTINGS, progress?: { write: (text: string) => unknown }) =>
  runWithSettings(database, argv, { RESULT_DIR: resultDir, ...env }, progress);

async function json<T = Record<string, any>>(argv: string[], env?: Record<string, string>): Promise<T> {
  const result = await run([...argv, "--json"], env);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

async function finishedTask(studyKey: string, daysAgo: number, kind: "run-actions" | "timer" = "run-actions") {
  const at = new Date(Date.now() - daysAgo * DAY);
  const input =
    kind === "timer"
      ? { dueAt: at.toISOString(), rulesVersion: 1, intervalSeconds: 3_600, offsetSeconds: 0, defaultInterval: true }
      : { rules: [], dryRun: false };
  const [row] = await database.db
    .insert(tasks)
    .values({
      studyKey,
      kind,
      input,
      createdBy: "x",
      status: "completed",
      createdAt: at,
      updatedAt: at,
      finishedAt: at,
    })
    .returning();
  return row!;
}

describe("study:task-retention", () => {
  it("shows the deployment's defaults, sets the study's own (audited), and returns to the default", async () => {
    const shown = await json(["study:task-retention", "--study", "flu"], { TASK_RETENTION_DAYS: "off" });
    expect(shown.taskRetention).toMatchObject({
      days: null,
      timerDays: null,
      effectiveDays: 0,
      effectiveTimerDays: 7,
      defaultDays: 0,
      defaultTimerDays: 7,
    });
    const text = await run(["study:task-retention", "--study", "flu"]);
    expect(text.stdout).toMatch(/^task retention of study "flu"\n/);
    expect(text.stdout).toMatch(/run-actions, exports +default \(30 days, TASK_RETENTION_DAYS\)/);
    expect(text.stdout).toMatch(/timer ticks +default \(7 days, TIMER_TASK_RETENTION_DAYS\)/);

    const set = await json(["study:task-retention", "--study", "kept", "--days", "off", "--timer-days", "2"]);
    expect(set.taskRetention).toMatchObject({ days: 0, timerDays: 2, effectiveDays: 0, updatedBy: "operator-cli" });
    const again = await run(["study:task-retention", "--study", "kept"]);
    expect(again.stdout).toMatch(/run-actions, exports +forever/);
    expect(again.stdout).toMatch(/timer ticks +2 days/);
    const reset = await json(["study:task-retention", "--study", "kept", "--timer-days", "default"]);
    expect(reset.taskRetention).toMatchObject({ days: 0, timerDays: null, effectiveTimerDays: 7 });
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.studyKey, "kept")).orderBy(auditLog.id);
    expect(audit.map((entry) => [entry.action, entry.details])).toEqual([
      ["task-retention.update", { days: { from: null, to: 0 }, timerDays: { from: null, to: 2 } }],
      ["task-retention.update", { timerDays: { from: 2, to: null } }],
    ]);
  });

  it("refuses bad values before touching the database, and an unknown study", async () => {
    for (const value of ["-1", "3651", "1.5", "never", ""]) {
      const result = await run(["study:task-retention", "--study", "flu", "--days", value]);
      expect(result.exitCode, value).not.toBe(0);
      expect(result.stderr, value).toMatch(/--days/);
    }
    const unknown = await run(["study:task-retention", "--study", "nope", "--days", "3"]);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(/study "nope" not found/);
  });
});

describe("tasks:prune", () => {
  it("--dry-run counts per study and removes nothing; the run removes them with a progress display", async () => {
    const old = await finishedTask("flu", 40);
    const recent = await finishedTask("flu", 3);
    const oldTick = await finishedTask("flu", 9, "timer");
    const latestTick = await finishedTask("flu", 8, "timer");
    // "kept" keeps run-actions forever (set above); its ticks are on the default, 7 days.
    const keptOld = await finishedTask("kept", 400);

    const dry = await json(["tasks:prune", "--dry-run"]);
    expect(dry).toEqual({
      dryRun: true,
      studies: [{ studyKey: "flu", days: 30, timerDays: 7, tasks: 1, timerTicks: 1, files: 0 }],
      tasks: 1,
      timerTicks: 1,
      files: 0,
      finished: true,
    });
    const dryText = await run(["tasks:prune", "--dry-run"]);
    expect(dryText.stdout).toMatch(/^would remove 1 task\(s\), 1 timer tick\(s\), 0 export file record\(s\)\n/);
    expect(dryText.stdout).toMatch(/ {2}flu: 1 task\(s\) \(after 30 d\), 1 tick\(s\) \(after 7 d\), 0 file\(s\)/);
    const ids = async () => (await database.db.select({ id: tasks.id }).from(tasks)).map((row) => row.id).sort();
    expect(await ids()).toHaveLength(5);

    const progress: string[] = [];
    const pruned = await run(["tasks:prune"], SETTINGS, { write: (text) => progress.push(text) });
    expect(pruned.exitCode).toBe(0);
    expect(pruned.stdout).toMatch(/^removed 1 task\(s\), 1 timer tick\(s\), 0 export file record\(s\)\n/);
    expect(progress.join("")).toMatch(/prune: 2 of 2 tasks \(100 %\) completed/);
    expect(await ids()).toEqual([recent.id, latestTick.id, keptOld.id].sort());
    void old;
    void oldTick;

    const nothing = await run(["tasks:prune", "--study", "flu"]);
    expect(nothing.stdout).toBe("nothing past retention\n");
  });
});
