import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { DASHBOARD_PATH, dashboardCredentials, type DashboardCredentials } from "../src/dashboard";
import { createHealthApp } from "../src/health";
import { QUEUE_STATES } from "../src/metrics";
import type { WorkerRuntime } from "../src/runtime";
import { call, createWorkerHarness, onCustom, str, studyWithRules, type WorkerHarness } from "./worker-harness";

const PARTICIPANTS = 1_250;
const credentials: DashboardCredentials = { user: "operator", password: "a-long-dashboard-secret" };

function basic(user: string, password: string) {
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/** The value of the one sample line that starts with `series` (name and labels, exactly). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("worker metrics and queue dashboard on the health/admin app", () => {
  let h: WorkerHarness;
  let runtime: WorkerRuntime;
  let redis: Redis;
  let processed: number;
  const appWith = (dashboard?: DashboardCredentials) =>
    createHealthApp({
      database: h.database,
      redis,
      isRunning: () => runtime.worker.isRunning(),
      metrics: runtime.metrics,
      ...(dashboard ? { dashboard: { queues: [runtime.queue], credentials: dashboard } } : {}),
    });

  beforeAll(async () => {
    h = await createWorkerHarness();
    redis = createRedisConnection(testRedisUrl, "producer");
    await studyWithRules(h, "metered");
    await addSyntheticParticipants(h.database.db, {
      studyKey: "metered",
      count: PARTICIPANTS,
      enteredAt: Math.floor(Date.now() / 1000),
    });
    runtime = h.start({ batchSize: 100, chunkSize: 400 });
    const taskId = await h.createTask("metered", [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")))]);
    const task = await h.waitForTask(taskId, ["completed", "failed"]);
    expect(task.status).toBe("completed");
    processed = task.processedCount;
  });
  afterAll(async () => {
    await h.close();
    redis.disconnect();
  });

  it("/metrics counts the participants processed, tasks by status and queue depths", async () => {
    expect(processed).toBe(PARTICIPANTS);
    const res = await appWith().request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();

    expect(text).toContain("# TYPE studyflow_participants_processed_total counter");
    expect(sample(text, "studyflow_participants_processed_total")).toBe(processed);
    // a flag rule runs in the database: 13 batches of at most 100 over 4 chunks, none in the engine
    expect(text).toContain("# TYPE studyflow_bulk_batches_total counter");
    expect(sample(text, 'studyflow_bulk_batches_total{ran_in="database"}')).toBeGreaterThanOrEqual(13);
    expect(sample(text, 'studyflow_bulk_batches_total{ran_in="engine"}')).toBe(0);

    expect(text).toContain("# TYPE studyflow_tasks gauge");
    expect(sample(text, 'studyflow_tasks{status="completed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'studyflow_tasks{status="failed"}')).toBe(0);

    expect(text).toContain("# TYPE studyflow_queue_jobs gauge");
    for (const state of QUEUE_STATES) {
      expect(sample(text, `studyflow_queue_jobs{queue="${TASKS_QUEUE}",state="${state}"}`)).toBeGreaterThanOrEqual(0);
    }
    // The task job and its chunk jobs have all finished.
    expect(sample(text, `studyflow_queue_jobs{queue="${TASKS_QUEUE}",state="completed"}`)).toBeGreaterThanOrEqual(2);
    expect(sample(text, `studyflow_queue_jobs{queue="${TASKS_QUEUE}",state="waiting"}`)).toBe(0);

    expect(text).toContain("process_resident_memory_bytes");
  });

  it("gauges follow the database and queue at every scrape", async () => {
    const before = sample(await (await appWith().request("/metrics")).text(), 'studyflow_tasks{status="queued"}');
    await h.queue.pause();
    try {
      await h.createTask("metered", [onCustom(call("UPDATE_FLAG", str("again"), str("yes")))]);
      const text = await (await appWith().request("/metrics")).text();
      expect(sample(text, 'studyflow_tasks{status="queued"}')).toBe((before ?? 0) + 1);
      // A paused queue keeps its jobs in "paused", which is not among the reported states.
      expect(sample(text, `studyflow_queue_jobs{queue="${TASKS_QUEUE}",state="active"}`)).toBe(0);
    } finally {
      await h.queue.resume();
    }
  });

  it("the dashboard answers 401 without credentials and with wrong ones", async () => {
    const app = appWith(credentials);
    const none = await app.request(DASHBOARD_PATH);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect((await app.request(DASHBOARD_PATH, { headers: basic(credentials.user, "wrong-password-123") })).status).toBe(
      401,
    );
    expect((await app.request(DASHBOARD_PATH, { headers: basic("someone", credentials.password) })).status).toBe(401);
    // Its API and assets are behind the same door.
    expect((await app.request(`${DASHBOARD_PATH}/api/queues`)).status).toBe(401);
    expect((await app.request(`${DASHBOARD_PATH}/static/favicon-32x32.png`)).status).toBe(401);
  });

  it("the dashboard serves its page, API and assets with the right credentials", async () => {
    const app = appWith(credentials);
    const headers = basic(credentials.user, credentials.password);
    const page = await app.request(DASHBOARD_PATH, { headers });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain(`<base href="${DASHBOARD_PATH}/" />`);
    expect(html).toContain("<title>studyflow queues</title>");

    const api = await app.request(`${DASHBOARD_PATH}/api/queues`, { headers });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: { name: string }[] };
    expect(body.queues.map((queue) => queue.name)).toContain(TASKS_QUEUE);

    const asset = await app.request(`${DASHBOARD_PATH}/static/favicon-32x32.png`, { headers });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("image/png");
  });

  it("without credentials configured the dashboard is not mounted", async () => {
    const app = appWith();
    expect((await app.request(DASHBOARD_PATH)).status).toBe(404);
    expect((await app.request(DASHBOARD_PATH, { headers: basic(credentials.user, credentials.password) })).status).toBe(
      404,
    );
    expect((await app.request(`${DASHBOARD_PATH}/api/queues`)).status).toBe(404);
    expect((await app.request("/healthz")).status).toBe(200);
  });
});

describe("dashboard credentials from config", () => {
  function capture() {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    return { logger, lines };
  }

  it("both set: the dashboard is on and nothing is logged", () => {
    const { logger, lines } = capture();
    expect(
      dashboardCredentials({ DASHBOARD_USER: "ops", DASHBOARD_PASSWORD: "twelve-chars-at-least" }, logger),
    ).toEqual({
      user: "ops",
      password: "twelve-chars-at-least",
    });
    expect(lines).toEqual([]);
  });

  it("neither set: off, said once", () => {
    const { logger, lines } = capture();
    expect(dashboardCredentials({}, logger)).toBeUndefined();
    expect(lines.map((line) => line.msg)).toEqual([expect.stringMatching(/queue dashboard is off/)]);
  });

  it("only one set: off, with a warning", () => {
    const { logger, lines } = capture();
    expect(dashboardCredentials({ DASHBOARD_USER: "ops" }, logger)).toBeUndefined();
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: expect.stringMatching(/set both/) })]);
  });
});
