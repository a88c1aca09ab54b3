import { Queue } from "bullmq";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks } from "@studyflow/db";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { ACCOUNT_DELETION_QUEUE, TASKS_QUEUE, TIMER_QUEUE, createRedisConnection } from "@studyflow/queue";
import { onEvent, testRedisUrl } from "@studyflow/testkit";
import { call, createWorkerHarness, str, studyWithRules, type WorkerHarness } from "./worker-harness";

const NOW_S = Math.floor(Date.now() / 1000);
const SCAN_EVERY_MS = 250;

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("the study timer runs on a cluster-wide BullMQ job scheduler", () => {
  let h: WorkerHarness;
  const producer = createRedisConnection(testRedisUrl, "producer");
  let timerQueue: Queue;

  beforeAll(async () => {
    h = await createWorkerHarness();
    timerQueue = new Queue(TIMER_QUEUE, { connection: producer, prefix: h.prefix });
  });
  afterAll(async () => {
    await h.close();
    await timerQueue.close();
    producer.disconnect();
  });

  it("two replicas keep one scheduler, and a due tick runs once, not once per replica or per scan", async () => {
    await studyWithRules(h, "ticking", [onEvent("TIMER", call("UPDATE_FLAG", str("ticked"), str("yes")))]);
    await addSyntheticParticipants(h.database.db, { studyKey: "ticking", count: 500, enteredAt: NOW_S });
    const timer = { defaultIntervalSeconds: 3_600, scanEveryMs: SCAN_EVERY_MS };
    const replicas = [1, 2].map(() => h.start({ timer, batchSize: 100 }));
    await Promise.all(replicas.map((replica) => replica.schedulesReady));

    expect((await timerQueue.getJobSchedulers()).map((s) => [s.key, s.every])).toEqual([
      ["start-due-timer-ticks", SCAN_EVERY_MS],
    ]);
    expect(replicas[0]!.queues.map((queue) => queue.name)).toEqual([TASKS_QUEUE, ACCOUNT_DELETION_QUEUE, TIMER_QUEUE]);

    const ticksOf = () =>
      h.database.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.studyKey, "ticking"), eq(tasks.kind, "timer")));
    const deadline = Date.now() + 20_000;
    let ticks = await ticksOf();
    while (!(ticks.length === 1 && ticks[0]!.status === "completed") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ticks = await ticksOf();
    }
    expect(ticks).toHaveLength(1);
    expect(ticks[0]).toMatchObject({ status: "completed", processedCount: 500, createdBy: "study-timer" });
    const slotStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    expect(Date.parse((ticks[0]!.input as { dueAt: string }).dueAt)).toBeLessThanOrEqual(slotStart);

    // More scans run; they find the slot ticked.
    const scans = async () => (await timerQueue.getJobs(["completed"])).length;
    const before = await scans();
    while ((await scans()) < before + 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await scans()).toBeGreaterThanOrEqual(before + 3);
    expect(await ticksOf()).toHaveLength(1);
    // The tick's task job is named apart on the tasks queue (the dashboard lists it so).
    expect((await h.queue.getJob(ticks[0]!.id))?.name).toBe("timer-tick");
    const recorded = (await timerQueue.getJobs(["completed"]))
      .map((job) => job.returnvalue as { ticks: { studyKey: string; status: string }[] })
      .flatMap((value) => value.ticks);
    expect(recorded).toEqual([expect.objectContaining({ studyKey: "ticking", status: "queued" })]);

    // Metrics: the tick counted once across the replicas; skipped ticks are a task status.
    const texts = await Promise.all(replicas.map((replica) => replica.metrics.registry.metrics()));
    const total = (series: string) => texts.reduce((sum, text) => sum + (sample(text, series) ?? 0), 0);
    expect(total('studyflow_timer_ticks_total{outcome="queued"}')).toBe(1);
    expect(total('studyflow_timer_ticks_total{outcome="skipped"}')).toBe(0);
    expect(sample(texts[0]!, 'studyflow_tasks{status="skipped"}')).toBe(0);
    expect(sample(texts[0]!, `studyflow_queue_jobs{queue="${TIMER_QUEUE}",state="delayed"}`)).toBe(1);
  });

  it("a runtime without the timer keeps no timer schedule and consumes no timer queue", async () => {
    const runtime = h.start();
    await runtime.schedulesReady;
    expect(runtime.queues.map((queue) => queue.name)).toEqual([TASKS_QUEUE, ACCOUNT_DELETION_QUEUE]);
  });
});
