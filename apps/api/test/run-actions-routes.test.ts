import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks } from "@studyflow/db";
import { call, insertParticipant, managementToken, onEvent, postJson, researcher, setupStudy, str } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const rules = [onEvent("CUSTOM", call("UPDATE_FLAG", str("seen"), str("yes")))];
const base = (study: string) => `/v1/studies/${study}/run-actions/participants/`;

describe("run-actions task routes", () => {
  let t: TestApp;
  let resultDir: string;
  let owner: { subject: string; token: string };

  beforeAll(async () => {
    resultDir = path.join(tmpdir(), `sf-results-${Math.random().toString(36).slice(2)}`);
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-b" });
    owner = await researcher(t, "study-a", "run-study-action");
    for (const [participantId, studyStatus] of [
      ["p1", "active"],
      ["p2", "exited"],
      ["p3", "temporary"],
      ["p4", "accountDeleted"],
      ["p5", "virtual"],
    ] as const) {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId, studyStatus });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates a queued task counting eligible participants and enqueues its job (200, as case-backend)", async () => {
    const res = await postJson(t, base("study-a"), { rules }, owner.token);
    expect(res.status).toBe(200);
    const { task } = await res.json();
    expect(task).toMatchObject({
      status: "queued",
      targetCount: 3,
      processedCount: 0,
      createdBy: owner.subject,
      fileType: "application/json",
      resultFile: "",
      error: "",
    });
    expect(new Date(task.createdAt).toISOString()).toBe(task.createdAt);
    const job = await t.deps.taskQueue.getJob(task.id);
    expect(job?.data).toEqual({ kind: "task", taskId: task.id });
    const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row?.input).toEqual({ rules, dryRun: false });
  });

  it("rejects invalid rules with 400 naming the JSON path, writing nothing", async () => {
    const before = await t.database.db.select().from(tasks);
    const res = await postJson(
      t,
      base("study-a"),
      { rules: [rules[0], { name: "IFTHEN", data: [{ dtype: "exp", exp: { name: "hasStudyStatuss", data: [] } }] }] },
      owner.token,
    );
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/rules\[1\]\.data\[0\]\.exp\.name: unknown expression "hasStudyStatuss"/);
    for (const body of [{}, { rules: "x" }, { rules: [{ data: [] }] }, { rules, dryRun: "yes" }]) {
      expect((await postJson(t, base("study-a"), body, owner.token)).status).toBe(400);
    }
    expect(await t.database.db.select().from(tasks)).toEqual(before);
  });

  it("404 for an unknown study; 401/403 for the wrong caller", async () => {
    const admin = await managementToken(t, "root", true);
    expect((await postJson(t, base("nope"), { rules }, admin)).status).toBe(404);
    expect((await postJson(t, base("study-a"), { rules })).status).toBe(401);
    const editor = await researcher(t, "study-a", "edit-participant-data");
    expect((await postJson(t, base("study-a"), { rules }, editor.token)).status).toBe(403);
  });

  it("shows a task to its creator and admins only, and only under its own study", async () => {
    const { task } = await (await postJson(t, base("study-a"), { rules, dryRun: true }, owner.token)).json();
    const url = `${base("study-a")}task/${task.id}`;
    const mine = await t.app.request(url, { headers: { Authorization: `Bearer ${owner.token}` } });
    expect(mine.status).toBe(200);
    expect((await mine.json()).task.id).toBe(task.id);

    const colleague = await researcher(t, "study-a", "run-study-action");
    const theirs = await t.app.request(url, { headers: { Authorization: `Bearer ${colleague.token}` } });
    expect(theirs.status).toBe(403);
    const admin = await managementToken(t, "root", true);
    expect((await t.app.request(url, { headers: { Authorization: `Bearer ${admin}` } })).status).toBe(200);

    const wrongStudy = `${base("study-b")}task/${task.id}`;
    expect((await t.app.request(wrongStudy, { headers: { Authorization: `Bearer ${admin}` } })).status).toBe(404);
    for (const id of ["not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
      const res = await t.app.request(`${base("study-a")}task/${id}`, {
        headers: { Authorization: `Bearer ${admin}` },
      });
      expect(res.status).toBe(404);
    }
  });

  it("serves the result only once completed (409 before), from the result directory", async () => {
    const { task } = await (await postJson(t, base("study-a"), { rules }, owner.token)).json();
    const resultUrl = `${base("study-a")}task/${task.id}/result`;
    const headers = { Authorization: `Bearer ${owner.token}` };
    const early = await t.app.request(resultUrl, { headers });
    expect(early.status).toBe(409);
    expect(await early.json()).toEqual({ error: 'task has not completed (status "queued")' });

    const document = {
      participantCount: 3,
      participantStateChangedPerRule: [3],
      errorCount: 0,
      errors: [],
      durationMs: 12,
      dryRun: false,
    };
    await mkdir(path.join(resultDir, "study-a"), { recursive: true });
    await writeFile(path.join(resultDir, "study-a", `${task.id}.json`), JSON.stringify(document));
    await t.database.db
      .update(tasks)
      .set({ status: "completed", resultFile: `study-a/${task.id}.json` })
      .where(eq(tasks.id, task.id));
    const res = await t.app.request(resultUrl, { headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(document);

    await t.database.db.update(tasks).set({ resultFile: "../../etc/passwd" }).where(eq(tasks.id, task.id));
    expect((await t.app.request(resultUrl, { headers })).status).toBe(404);
  });

  it("cancels a queued task once; a second cancel is 409", async () => {
    const { task } = await (await postJson(t, base("study-a"), { rules }, owner.token)).json();
    const cancelUrl = `${base("study-a")}task/${task.id}/cancel`;
    const colleague = await researcher(t, "study-a", "run-study-action");
    expect((await postJson(t, cancelUrl, {}, colleague.token)).status).toBe(403);
    const res = await postJson(t, cancelUrl, {}, owner.token);
    expect(res.status).toBe(200);
    expect((await res.json()).task.status).toBe("canceled");
    const again = await postJson(t, cancelUrl, {}, owner.token);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: "task is already canceled" });
  });
});
