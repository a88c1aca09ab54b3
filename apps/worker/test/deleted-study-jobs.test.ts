import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDb, tasks, type DbHandle } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { deleteStudy } from "@studyflow/domain/studies";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { planTask } from "@studyflow/domain/task-pipeline";
import { chunkJobId, queueTask, taskJobId } from "@studyflow/queue";
import { call, createWorkerHarness, onCustom, str, studyWithRules, type WorkerHarness } from "./worker-harness";

const setFlag = onCustom(call("UPDATE_FLAG", str("seen"), str("yes")));
const NOW_S = Math.floor(Date.now() / 1000);

/** A queued job of a study deleted meanwhile ends once, cleanly: never failed, never retried. */
describe("queued bulk jobs of a deleted study", () => {
  let h: WorkerHarness;
  const pools: DbHandle[] = [];

  beforeAll(async () => {
    h = await createWorkerHarness();
  });
  afterEach(async () => {
    await Promise.all(h.runtimes.splice(0).map((runtime) => runtime.close(5_000)));
    await Promise.all(pools.splice(0).map((pool) => pool.close(1)));
  });
  afterAll(async () => {
    await h.close();
  });

  const populated = async (key: string, count: number) => {
    await studyWithRules(h, key, [setFlag]);
    await addSyntheticParticipants(h.database.db, { studyKey: key, count, enteredAt: NOW_S, idPrefix: `${key}-` });
  };
  const waitForJob = async (jobId: string, state: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = await h.queue.getJob(jobId);
      // The job's fields are read before its state: one that finished in between is read again, so
      // that its return value and attempts are the finished ones.
      if (job && (await job.getState()) === state) return (await h.queue.getJob(jobId)) ?? job;
      if (Date.now() > deadline) throw new Error(`job ${jobId} is ${job ? await job.getState() : "missing"}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("a run-actions task and a timer tick queued before the deletion are dropped; the next study's task runs", async () => {
    await populated("gone", 20);
    const runActions = await h.createTask("gone", [setFlag]);
    const tick = await h.insertTaskRow("gone", {
      kind: "timer",
      input: {
        dueAt: new Date().toISOString(),
        rulesVersion: 1,
        intervalSeconds: 3_600,
        offsetSeconds: 0,
        defaultInterval: true,
      },
    });
    await queueTask(h.queue, tick);
    await deleteStudy(h.database.db, "gone", "tester");
    expect(await h.database.db.select().from(tasks)).toEqual([]);

    h.start();
    await populated("kept", 20);
    const kept = await h.createTask("kept", [setFlag]);
    expect(await h.waitForTask(kept, ["completed"])).toMatchObject({ processedCount: 20 });
    for (const taskId of [runActions, tick.id]) {
      const job = await waitForJob(taskJobId(taskId), "completed");
      // Mostly the batch that waited finds its chunk gone (skipped); when the lock wait seen above was
      // another statement on task_chunks, the chunk job starts after the delete and finds nothing to
      // run (no return value). Either way it ends in its first attempt, and nothing is retried.
      expect([null, { skipped: "task is gone or has ended" }]).toContainEqual(job.returnvalue ?? null);
      // one attempt: the one that ended it
      expect(job.attemptsMade).toBe(1);
    }
    expect(await h.queue.getJobCounts("failed", "delayed", "waiting", "active")).toEqual({
      failed: 0,
      delayed: 0,
      waiting: 0,
      active: 0,
    });
  });

  it("a study deleted while a chunk waits for its batch: the chunk job ends at once, without retrying", async () => {
    await populated("mid", 30);
    const taskId = await h.createTask("mid", [setFlag]);
    // Planned beforehand, so the test can hold the chunk's row where the worker's batch takes it.
    const planned = await planTask(h.database.db, taskId, { clock: systemClock });
    expect(planned).toMatchObject({ status: "planned", chunks: [{ chunkIndex: 0 }] });

    const blocker = createDb(h.database.url, { max: 1 });
    const observer = createDb(h.database.url, { max: 1 });
    pools.push(blocker, observer);
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let goOn!: () => void;
    const go = new Promise<void>((resolve) => (goOn = resolve));
    // The study is deleted in the transaction that holds the chunk row, so it commits while the
    // worker's batch waits for that row: the batch then finds its chunk gone.
    const deleting = blocker.db.transaction(async (tx) => {
      await tx.execute(`select 1 from task_chunks where task_id = '${taskId}' for update`);
      holding();
      await go;
      await deleteStudy(tx, "mid", "tester");
    });
    await held;

    h.start();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const waiting = await observer.sql<{ query: string }[]>`
        select query from pg_stat_activity
        where datname = ${h.database.name} and wait_event_type = 'Lock' and query like ${"%from task_chunks%"}`;
      if (waiting.length > 0) break;
      if (Date.now() > deadline) throw new Error("the worker's batch never waited for the chunk");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    goOn();
    await deleting;

    const job = await waitForJob(chunkJobId(taskId, 0), "completed");
    // Mostly the batch that waited finds its chunk gone (skipped); when the lock wait seen above was
    // another statement on task_chunks, the chunk job starts after the delete and finds nothing to
    // run (no return value). Either way it ends in its first attempt, and nothing is retried.
    expect([null, { skipped: "task is gone or has ended" }]).toContainEqual(job.returnvalue ?? null);
    // one attempt: the one that ended it
    expect(job.attemptsMade).toBe(1);
    expect(await h.database.db.select().from(tasks).where(eq(tasks.id, taskId))).toEqual([]);
    expect(await h.queue.getJobCounts("failed", "delayed")).toEqual({ failed: 0, delayed: 0 });

    // the worker goes on with other studies
    await populated("after", 5);
    const after = await h.createTask("after", [setFlag]);
    expect(await h.waitForTask(after, ["completed"])).toMatchObject({ processedCount: 5 });
  });
});
