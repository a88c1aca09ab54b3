import { Writable } from "node:stream";
import { Queue } from "bullmq";
import { pino } from "pino";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "@studyflow/domain/foundation";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { createRunActionsTask } from "@studyflow/domain/tasks";
import {
  LEGACY_TASKS_QUEUE,
  TASKS_QUEUE,
  createRedisConnection,
  taskJobId,
  taskJobName,
  taskJobOptions,
  type TaskJob,
} from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { call, createWorkerHarness, onCustom, str, studyWithRules, type WorkerHarness } from "./worker-harness";

/**
 * A deployment upgrading from the release whose task queue was named "run-actions" may have jobs
 * waiting there; a starting worker moves them onto the tasks queue, where they run.
 */
describe("jobs left on the legacy task queue", () => {
  let h: WorkerHarness;
  let legacy: Queue;
  const producer = createRedisConnection(testRedisUrl, "producer");

  beforeEach(async () => {
    h = await createWorkerHarness();
    legacy = new Queue(LEGACY_TASKS_QUEUE, { connection: producer, prefix: h.prefix });
  });
  afterEach(async () => {
    await legacy.close();
    await h.close();
  });
  afterAll(() => producer.disconnect());

  it("waiting, delayed and prioritised jobs move with their id and data, run, and leave the old queue empty", async () => {
    const rules = [onCustom(call("UPDATE_FLAG", str("moved"), str("yes")))];
    const queued: { taskId: string; how: "waiting" | "delayed" | "prioritized" }[] = [];
    for (const how of ["waiting", "delayed", "prioritized"] as const) {
      const studyKey = `legacy-${how}`;
      await studyWithRules(h, studyKey);
      await addSyntheticParticipants(h.database.db, { studyKey, count: 3, statuses: ["active"], enteredAt: 0 });
      const task = await createRunActionsTask(
        h.database.db,
        { studyKey, rules, dryRun: false, createdBy: "tester" },
        async (taskId) => {
          const job: TaskJob = { kind: "task", taskId };
          await legacy.add(taskJobName("run-actions"), job, {
            ...taskJobOptions,
            jobId: taskJobId(taskId),
            ...(how === "delayed" ? { delay: 1_500 } : {}),
            ...(how === "prioritized" ? { priority: 5 } : {}),
          });
        },
        { clock: systemClock },
      );
      queued.push({ taskId: task.id, how });
    }
    expect(await legacy.getJobCounts("waiting", "delayed", "prioritized")).toEqual({
      waiting: 1,
      delayed: 1,
      prioritized: 1,
    });

    const lines: string[] = [];
    const logger = pino(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const runtime = h.start({ logger });
    expect(await runtime.legacyJobsMoved).toBe(3);
    const moved = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((record) => "moved" in record);
    expect(moved).toMatchObject({ moved: 3, from: LEGACY_TASKS_QUEUE, to: TASKS_QUEUE });

    for (const { taskId } of queued) {
      const job = await h.queue.getJob(taskJobId(taskId));
      expect(job?.data).toEqual({ kind: "task", taskId });
    }
    for (const { taskId } of queued) {
      expect(await h.waitForTask(taskId, ["completed", "failed"])).toMatchObject({
        status: "completed",
        processedCount: 3,
      });
    }
    expect(await legacy.getJobCounts("waiting", "delayed", "prioritized", "active")).toEqual({
      waiting: 0,
      delayed: 0,
      prioritized: 0,
      active: 0,
    });
  });

  it("a delayed job stays delayed until it falls due", async () => {
    await studyWithRules(h, "later");
    const task = await createRunActionsTask(
      h.database.db,
      { studyKey: "later", rules: [], dryRun: false, createdBy: "tester" },
      async (taskId) => {
        const job: TaskJob = { kind: "task", taskId };
        await legacy.add(taskJobName("run-actions"), job, {
          ...taskJobOptions,
          jobId: taskJobId(taskId),
          delay: 60_000,
        });
      },
      { clock: systemClock },
    );
    const runtime = h.start();
    expect(await runtime.legacyJobsMoved).toBe(1);
    const job = await h.queue.getJob(taskJobId(task.id));
    expect(await job?.getState()).toBe("delayed");
    expect(await legacy.getJobCounts("delayed")).toEqual({ delayed: 0 });
  });
});
