import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants } from "@studyflow/db";
import { createStudy } from "@studyflow/domain";
import { MAINTENANCE_QUEUE, OUTBOX_QUEUE, createRedisConnection } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { EXPIRE_TEMPORARY_EVERY_MS, SWEEP_STALE_TASKS_EVERY_MS } from "../src/schedules/cluster-schedules";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const DAY = 86_400;

describe("periodic work runs on cluster-wide BullMQ job schedulers", () => {
  let harness: WorkerHarness;
  const producer = createRedisConnection(testRedisUrl, "producer");
  let maintenance: Queue;
  let outbox: Queue;

  beforeAll(async () => {
    harness = await createWorkerHarness();
    maintenance = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix: harness.prefix });
    outbox = new Queue(OUTBOX_QUEUE, { connection: producer, prefix: harness.prefix });
  });
  afterAll(async () => {
    await harness.close();
    await maintenance.close();
    await outbox.close();
    producer.disconnect();
  });

  it("two replicas keep one scheduler per kind of work, and housekeeping runs once, not once per replica", async () => {
    await createStudy(harness.database.db, { key: "s" });
    const now = Date.UTC(2031, 0, 1);
    const nowSeconds = Math.floor(now / 1000);
    const rows = [
      { participantId: "old-temp", studyStatus: "temporary", enteredAt: nowSeconds - 30 * DAY },
      { participantId: "new-temp", studyStatus: "temporary", enteredAt: nowSeconds - DAY },
      { participantId: "old-active", studyStatus: "active", enteredAt: nowSeconds - 30 * DAY },
    ];
    await harness.database.db
      .insert(participants)
      .values(rows.map((row) => ({ ...row, studyKey: "s", modifiedAt: row.enteredAt })));

    const mail = { smtpUrl: "smtp://127.0.0.1:1", from: "studyflow <x@studyflow.test>", pollIntervalMs: 60_000 };
    const replicas = [1, 2].map(() =>
      harness.start({ maintenance: true, mail, clock: () => now, temporaryParticipantRetentionSeconds: 7 * DAY }),
    );
    await Promise.all(replicas.map((replica) => replica.schedulesReady));

    const schedulers = await maintenance.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.every]).sort()).toEqual([
      ["expire-temporary-participants", EXPIRE_TEMPORARY_EVERY_MS],
      ["sweep-stale-tasks", SWEEP_STALE_TASKS_EVERY_MS],
    ]);
    expect((await outbox.getJobSchedulers()).map((s) => [s.key, s.every])).toEqual([["deliver-due-messages", 60_000]]);
    // Both replicas' queues show on the dashboard and in metrics.
    expect(replicas[0]!.queues.map((queue) => queue.name)).toEqual(["run-actions", MAINTENANCE_QUEUE, OUTBOX_QUEUE]);

    // The first run of each schedule is due at once; one replica takes it.
    const deadline = Date.now() + 15_000;
    let completed = await maintenance.getJobs(["completed"]);
    while (completed.length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      completed = await maintenance.getJobs(["completed"]);
    }
    expect(completed.map((job) => job.name).sort()).toEqual(["expire-temporary-participants", "sweep-stale-tasks"]);
    // No second run by the other replica: the next runs wait for their interval.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await maintenance.getJobCounts("completed", "active", "waiting", "delayed")).toEqual({
      completed: 2,
      active: 0,
      waiting: 0,
      delayed: 2,
    });
    const expired = completed.find((job) => job.name === "expire-temporary-participants");
    expect(expired?.returnvalue).toEqual({ removed: 1 });
    const left = await harness.database.db.select({ id: participants.participantId }).from(participants);
    expect(left.map((row) => row.id).sort()).toEqual(["new-temp", "old-active"]);
  });

  it("a runtime with maintenance off consumes no maintenance queue and keeps no schedule", async () => {
    const runtime = harness.start({ maintenance: false });
    await runtime.schedulesReady;
    expect(runtime.queues.map((queue) => queue.name)).toEqual(["run-actions"]);
  });
});
