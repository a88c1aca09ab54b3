import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintManagementToken } from "@studyflow/domain/access";
import { addSyntheticParticipants, createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { call, onCustom, startWorkerBesideApi, str } from "@studyflow/worker/testing";

/** The whole path a researcher takes: POST through the API, a worker runs it, progress streams, result reads. */
describe("run-actions through the API and a worker", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let token: string;

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-e2e-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    await createStudy(t.database.db, { key: "e2e" });
    await addSyntheticParticipants(t.database.db, { studyKey: "e2e", count: 2_000, enteredAt: 1_700_000_000 });
    await grantPermission(t.database.db, "researcher", "e2e", "run-study-action");
    token = await mintManagementToken({
      now: Date.now(),
      subject: "researcher",
      isAdmin: false,
      secret: t.config.MANAGEMENT_JWT_SECRET,
    });
    worker = startWorkerBesideApi(t, resultDir, { batchSize: 100, chunkSize: 600 });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it("POST → 200, the event stream follows progress to completed, the result route serves the document", async () => {
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const post = await t.app.request("/v1/studies/e2e/run-actions/participants/", {
      method: "POST",
      headers,
      body: JSON.stringify({ rules: [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")))] }),
    });
    expect(post.status).toBe(200);
    const { task } = await post.json();
    expect(task).toMatchObject({ status: "queued", targetCount: 2_000 });

    const stream = await t.app.request(`/v1/studies/e2e/run-actions/participants/task/${task.id}/events`, { headers });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const text = await stream.text();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => (JSON.parse(line.slice(6)) as { task: { status: string; processedCount: number } }).task);
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)).toMatchObject({ status: "completed", processedCount: 2_000 });
    const counts = events.map((event) => event.processedCount);
    expect([...counts].sort((a, b) => a - b)).toEqual(counts);

    const result = await t.app.request(`/v1/studies/e2e/run-actions/participants/task/${task.id}/result`, { headers });
    expect(result.status).toBe(200);
    expect(await result.json()).toMatchObject({
      participantCount: 2_000,
      participantStateChangedPerRule: [2_000],
      errorCount: 0,
      dryRun: false,
    });
  });

  it("the event stream refuses strangers and unknown tasks", async () => {
    const stranger = await mintManagementToken({
      now: Date.now(),
      subject: "nobody",
      isAdmin: false,
      secret: t.config.MANAGEMENT_JWT_SECRET,
    });
    const url = "/v1/studies/e2e/run-actions/participants/task/00000000-0000-4000-8000-000000000000/events";
    expect((await t.app.request(url, { headers: { Authorization: `Bearer ${stranger}` } })).status).toBe(403);
    expect((await t.app.request(url, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(404);
    expect((await t.app.request(url)).status).toBe(401);
  });
});
