import { and, eq, inArray, sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { participants, reports, ruleFailures, studyCounters, taskChunks, tasks } from "@studyflow/db";
import { submitResponse } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { TASKS_QUEUE } from "@studyflow/queue";
import { sweepStaleTasks } from "../src/processors/stale-task-sweeper";
import {
  call,
  createWorkerHarness,
  exp,
  num,
  onCustom,
  readResult,
  str,
  studyWithRules,
  type WorkerHarness,
} from "./worker-harness";
import { pino } from "pino";

const NOW_S = Math.floor(Date.now() / 1000);

const rules = [
  onCustom(call("UPDATE_FLAG", str("bulk"), str("done"))),
  call(
    "IFTHEN",
    exp(call("hasStudyStatus", str("exited"))),
    exp(call("ADD_NEW_SURVEY", str("followup"), num(0), num(0), str("normal"))),
  ),
  call("IFTHEN", exp(call("hasParticipantFlag", str("bulk"), str("never"))), exp(call("REMOVE_FLAG", str("bulk")))),
];

describe("bulk run-actions in the worker", () => {
  let h: WorkerHarness;
  beforeEach(async () => {
    h = await createWorkerHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("5,000 participants: every eligible one processed once, exact per-rule counts and states", async () => {
    await studyWithRules(h, "big");
    await addSyntheticParticipants(h.database.db, {
      studyKey: "big",
      count: 5_000,
      statuses: ["active", "exited", "temporary", "accountDeleted", "virtual"],
      enteredAt: NOW_S,
    });
    h.start({ batchSize: 200, chunkSize: 700 });
    const taskId = await h.createTask("big", rules);
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task).toMatchObject({ status: "completed", targetCount: 3_000, processedCount: 3_000, error: "" });
    const result = await readResult(h, task.resultFile);
    expect(result).toMatchObject({
      participantCount: 3_000,
      participantStateChangedPerRule: [3_000, 1_000, 0],
      errorCount: 0,
      errors: [],
      dryRun: false,
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const chunks = await h.database.db.select().from(taskChunks).where(eq(taskChunks.taskId, taskId));
    expect(chunks.length).toBeGreaterThan(1);

    const byStatus = await h.database.db
      .select({
        status: participants.studyStatus,
        flagged: sql<number>`count(*) filter (where ${participants.flags} = '{"bulk":"done"}'::jsonb)::int`,
        surveys: sql<number>`sum(jsonb_array_length(${participants.assignedSurveys}))::int`,
        versions: sql<number>`sum(${participants.version})::int`,
        total: sql<number>`count(*)::int`,
      })
      .from(participants)
      .groupBy(participants.studyStatus);
    const summary = Object.fromEntries(byStatus.map((row) => [row.status, row]));
    expect(summary.active).toMatchObject({ flagged: 1_000, surveys: 0, versions: 2_000 });
    expect(summary.exited).toMatchObject({ flagged: 1_000, surveys: 1_000, versions: 2_000 });
    expect(summary.virtual).toMatchObject({ flagged: 1_000, surveys: 0, versions: 2_000 });
    expect(summary.temporary).toMatchObject({ flagged: 0, surveys: 0, versions: 1_000 });
    expect(summary.accountDeleted).toMatchObject({ flagged: 0, surveys: 0, versions: 1_000 });
  });

  it("a rule that touches only flags leaves every other column exactly as it was", async () => {
    await studyWithRules(h, "narrow");
    await addSyntheticParticipants(h.database.db, { studyKey: "narrow", count: 400, enteredAt: NOW_S });
    const survey = { surveyKey: "weekly", validFrom: 1, validUntil: 2, category: "normal" };
    const message = { id: "m1", type: "reminder", scheduledFor: 3 };
    await h.database.db.update(participants).set({
      flags: { keep: "me" },
      assignedSurveys: [survey],
      messages: [message],
      linkingCodes: { code: "c" },
      lastSubmissions: { weekly: 5 },
    });
    h.start({ batchSize: 100 });
    const taskId = await h.createTask("narrow", [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")))]);
    expect((await h.waitForTask(taskId, ["completed", "failed"])).status).toBe("completed");
    const rows = await h.database.db.select().from(participants);
    expect(rows).toHaveLength(400);
    for (const row of rows) {
      expect(row).toMatchObject({
        flags: { keep: "me", bulk: "done" },
        assignedSurveys: [survey],
        messages: [message],
        linkingCodes: { code: "c" },
        lastSubmissions: { weekly: 5 },
        version: 2,
      });
    }
  });

  it("two workers share one task and finish it exactly once", async () => {
    await studyWithRules(h, "shared");
    await addSyntheticParticipants(h.database.db, { studyKey: "shared", count: 3_000, enteredAt: NOW_S });
    const appendSurvey = [onCustom(call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")))];
    h.start({ batchSize: 100, chunkSize: 300, concurrency: 2 });
    h.start({ batchSize: 100, chunkSize: 300, concurrency: 2 });
    const taskId = await h.createTask("shared", appendSurvey);
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task.status).toBe("completed");
    const [copies] = await h.database.db
      .select({
        min: sql<number>`min(jsonb_array_length(${participants.assignedSurveys}))::int`,
        max: sql<number>`max(jsonb_array_length(${participants.assignedSurveys}))::int`,
      })
      .from(participants);
    expect(copies).toEqual({ min: 1, max: 1 });
    expect((await readResult(h, task.resultFile)).participantStateChangedPerRule).toEqual([3_000]);
  });

  it("tasks of one study run one after another, in the order they were created", async () => {
    await studyWithRules(h, "serial");
    await addSyntheticParticipants(h.database.db, { studyKey: "serial", count: 1_500, enteredAt: NOW_S });
    h.start({ batchSize: 50, chunkSize: 400, concurrency: 2 });
    h.start({ batchSize: 50, chunkSize: 400, concurrency: 2 });
    const first = await h.createTask("serial", [onCustom(call("UPDATE_FLAG", str("order"), str("first")))]);
    const second = await h.createTask("serial", [onCustom(call("UPDATE_FLAG", str("order"), str("second")))]);
    const [a, b] = await Promise.all([
      h.waitForTask(first, ["completed", "failed"]),
      h.waitForTask(second, ["completed", "failed"]),
    ]);
    expect([a.status, b.status]).toEqual(["completed", "completed"]);
    expect(b.startedAt!.getTime()).toBeGreaterThanOrEqual(a.finishedAt!.getTime());
    const [flags] = await h.database.db
      .select({ second: sql<number>`count(*) filter (where ${participants.flags} ->> 'order' = 'second')::int` })
      .from(participants);
    expect(flags?.second).toBe(1_500);
  });

  it("a dry run evaluates and counts but writes nothing besides the task and its result", async () => {
    await studyWithRules(h, "dry");
    await addSyntheticParticipants(h.database.db, { studyKey: "dry", count: 500, enteredAt: NOW_S });
    h.start({ batchSize: 100 });
    const withSideEffects = [
      onCustom(
        call("UPDATE_FLAG", str("bulk"), str("done")),
        call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("ids"), str("studyId")),
        call("INIT_REPORT", str("bulk-report")),
      ),
    ];
    const before = await h.database.db.select().from(participants).orderBy(participants.participantId);
    const taskId = await h.createTask("dry", withSideEffects, true);
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task.status).toBe("completed");
    expect(await readResult(h, task.resultFile)).toMatchObject({
      participantCount: 500,
      participantStateChangedPerRule: [500],
      dryRun: true,
    });
    expect(await h.database.db.select().from(participants).orderBy(participants.participantId)).toEqual(before);
    expect(await h.database.db.select().from(reports)).toEqual([]);
    expect(await h.database.db.select().from(studyCounters)).toEqual([]);
  });

  it("a rule that errors for some participants is reported, not fatal; they stay unchanged", async () => {
    await studyWithRules(h, "errs");
    await addSyntheticParticipants(h.database.db, { studyKey: "errs", count: 300, enteredAt: NOW_S });
    await h.database.db
      .update(participants)
      .set({ flags: { score: "not-a-number" } })
      .where(inArray(participants.participantId, ["p000000007", "p000000123"]));
    await h.database.db
      .update(participants)
      .set({ flags: { score: "21" } })
      .where(eq(participants.participantId, "p000000050"));
    h.start({ batchSize: 50 });
    const parse = [
      call(
        "IFTHEN",
        exp(call("hasParticipantFlagKey", str("score"))),
        exp(
          call(
            "UPDATE_FLAG",
            str("parsed"),
            exp(call("parseValueAsNum", exp(call("getParticipantFlagValue", str("score"))))),
          ),
        ),
      ),
    ];
    const taskId = await h.createTask("errs", parse);
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task.status).toBe("completed");
    const result = await readResult(h, task.resultFile);
    expect(result).toMatchObject({ participantCount: 300, errorCount: 2, participantStateChangedPerRule: [1] });
    expect(result.errors.map((e) => e.participantId).sort()).toEqual(["p000000007", "p000000123"]);
    expect(result.errors[0]?.error).toMatch(/"not-a-number"/);
    const [broken] = await h.database.db
      .select()
      .from(participants)
      .where(eq(participants.participantId, "p000000007"));
    expect(broken).toMatchObject({ flags: { score: "not-a-number" }, version: 1 });
    const [good] = await h.database.db.select().from(participants).where(eq(participants.participantId, "p000000050"));
    expect(good?.flags).toEqual({ score: "21", parsed: "21.000000" });
    // Researchers find them among the study's rule failures too, tied to the task.
    const recorded = await h.database.db.select().from(ruleFailures).where(eq(ruleFailures.taskId, taskId));
    expect(recorded.map((f) => f.participantId).sort()).toEqual(["p000000007", "p000000123"]);
    expect(recorded[0]).toMatchObject({
      studyKey: "errs",
      eventType: "CUSTOM",
      rulesVersion: null,
      ruleIndex: 0,
      path: "rules[0].data[1].exp.data[1].exp",
      outcome: "action-skipped",
    });
  });

  it("cancel stops the task after the batch in flight; written batches stay", async () => {
    await studyWithRules(h, "cancel");
    await addSyntheticParticipants(h.database.db, { studyKey: "cancel", count: 4_000, enteredAt: NOW_S });
    h.start({ batchSize: 20, chunkSize: 100_000, concurrency: 1 });
    const taskId = await h.createTask("cancel", [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")))]);
    for (;;) {
      const row = await h.task(taskId);
      if (row.processedCount > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await h.database.db.update(tasks).set({ status: "canceled" }).where(eq(tasks.id, taskId));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const settled = await h.task(taskId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = await h.task(taskId);
    expect(later.status).toBe("canceled");
    expect(later.processedCount).toBe(settled.processedCount);
    expect(later.processedCount).toBeLessThan(4_000);
    const [flagged] = await h.database.db
      .select({ count: sql<number>`count(*)::int` })
      .from(participants)
      .where(sql`${participants.flags} ? 'bulk'`);
    expect(flagged?.count).toBe(later.processedCount);
  });

  it("API submits racing a bulk run lose nothing", async () => {
    await studyWithRules(h, "race", [
      call(
        "IFTHEN",
        exp(call("checkEventType", str("SUBMIT"))),
        exp(call("UPDATE_FLAG", str("submitted"), str("yes"))),
      ),
    ]);
    await addSyntheticParticipants(h.database.db, { studyKey: "race", count: 2_000, enteredAt: NOW_S });
    h.start({ batchSize: 50, chunkSize: 100_000, concurrency: 1 });
    const taskId = await h.createTask("race", [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")))]);
    const targets = Array.from({ length: 200 }, (_, i) => `p${String(i * 10).padStart(9, "0")}`);
    for (let i = 0; i < targets.length; i += 10) {
      await Promise.all(
        targets
          .slice(i, i + 10)
          .map((participantId) =>
            submitResponse(
              h.database.db,
              { studyKey: "race", participantId, response: { key: "weekly" }, submittedBy: "tester" },
              { clock: Date.now },
            ),
          ),
      );
    }
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task.status).toBe("completed");
    const raced = await h.database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, "race"), inArray(participants.participantId, targets)));
    for (const row of raced) {
      expect(row.flags).toEqual({ bulk: "done", submitted: "yes" });
      expect(row.lastSubmissions).toHaveProperty("weekly");
    }
    const [all] = await h.database.db
      .select({ count: sql<number>`count(*)::int` })
      .from(participants)
      .where(sql`${participants.flags} ->> 'bulk' = 'done'`);
    expect(all?.count).toBe(2_000);
  });

  it("an invalid job payload fails its task, never the worker", async () => {
    await studyWithRules(h, "bad");
    const runtime = h.start();
    const row = await h.insertTaskRow("bad");
    await h.queue.add(TASKS_QUEUE, { kind: "chunk", taskId: row.id, chunkIndex: -4 }, { attempts: 1 });
    const failed = await h.waitForTask(row.id, ["failed"]);
    expect(failed.error).toBe("the task's job payload was invalid");
    expect(runtime.worker.isRunning()).toBe(true);
  });

  it("a job that keeps failing is retried, then fails its task with a readable error", async () => {
    await studyWithRules(h, "doomed");
    const runtime = h.start();
    const row = await h.insertTaskRow("doomed", { status: "in_progress" });
    // A chunk job for a chunk that was never planned: every attempt fails the same way.
    const job = await h.queue.add(
      TASKS_QUEUE,
      { kind: "chunk", taskId: row.id, chunkIndex: 0 },
      { attempts: 3, backoff: { type: "fixed", delay: 20 } },
    );
    const failed = await h.waitForTask(row.id, ["failed"]);
    expect(failed.error).toBe(`the run failed: chunk 0 of task ${row.id} does not exist`);
    expect((await h.queue.getJob(job.id!))?.attemptsMade).toBe(3);
    expect(runtime.worker.isRunning()).toBe(true);
  });

  it("the sweeper fails a running task whose jobs are gone and re-queues a queued one", async () => {
    await studyWithRules(h, "stale");
    const old = new Date(Date.now() - 10 * 60_000);
    const orphan = await h.insertTaskRow("stale", { status: "in_progress", updatedAt: old });
    const lost = await h.insertTaskRow("stale", { status: "queued", updatedAt: old });
    const outcome = await sweepStaleTasks({
      clock: systemClock,
      database: h.database,
      queue: h.queue,
      logger: pino({ level: "silent" }),
    });
    expect(outcome).toEqual({ requeued: [lost.id], failed: [orphan.id] });
    expect((await h.task(orphan.id)).status).toBe("failed");
    expect(await h.queue.getJob(lost.id)).toBeDefined();
    h.start();
    expect((await h.waitForTask(lost.id, ["completed", "failed"])).status).toBe("completed");
  });
});
