import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { tasks } from "@studyflow/db";
import { call, insertParticipant, managementToken, researcher, setupStudy, str } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";
import { caseAdminCall, replayCaseAdminCall } from "./case-admin/replay";

/*
 * case-admin's general action page (actions/general/[taskID]) follows a run-actions task at
 * data-exporter/participants/task/{id} and, once completed, downloads
 * data-exporter/participants/task/{id}/result, naming the file with `split('filename=')[1]`.
 */

const setFlag = (key: string, value: string) => call("UPDATE_FLAG", str(key), str(value));

describe("GET …/data-exporter/participants/task/{id}/result for a run-actions task", () => {
  let t: TestApp;
  let resultDir: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let runner: { subject: string; token: string };
  let admin: string;

  const resultUrl = (studyKey: string, taskID: string) =>
    `/v1/studies/${studyKey}/data-exporter/participants/task/${taskID}/result`;
  const download = (studyKey: string, taskID: string, token?: string) =>
    t.app.request(resultUrl(studyKey, taskID), {
      headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    });

  async function completedRun(studyKey: string, token: string): Promise<string> {
    const run = await replayCaseAdminCall(t, caseAdminCall("runStudyActionForAllParticipants"), {
      params: { studyKey },
      body: { rules: [setFlag("bulk", "1")] },
      token,
    });
    expect(run.status).toBe(200);
    const taskID = run.body.task.id as string;
    for (let i = 0; i < 200; i++) {
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, taskID));
      if (row?.status === "completed") return taskID;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("task did not complete");
  }

  /** A run-actions task row of `status`, as a worker leaves it. */
  async function taskRow(
    studyKey: string,
    createdBy: string,
    status: "queued" | "in_progress" | "failed" | "canceled",
  ) {
    const [row] = await t.database.db
      .insert(tasks)
      .values({
        studyKey,
        kind: "run-actions",
        input: { rules: [setFlag("x", "1")], dryRun: false },
        createdBy,
        status,
        ...(status === "failed" ? { error: "rules failed to load" } : {}),
      })
      .returning();
    return row?.id ?? "";
  }

  beforeAll(async () => {
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-run-actions-result-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    worker = startWorkerBesideApi(t, resultDir, { batchSize: 2, chunkSize: 3 });
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "other" });
    for (const participantId of ["p1", "p2", "p3"]) {
      await insertParticipant(t.database.db, { studyKey: "flu", participantId });
    }
    await insertParticipant(t.database.db, { studyKey: "other", participantId: "o1" });
    runner = await researcher(t, "flu", "run-study-action");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    if (resultDir) await rm(resultDir, { recursive: true, force: true });
  });

  it("answers the result document as a JSON attachment case-admin saves as results_<id>.json", async () => {
    const taskID = await completedRun("flu", runner.token);
    const res = await download("flu", taskID, runner.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename=results_${taskID}.json`);
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    // What case-admin's ExportTaskTracker names the file.
    expect(res.headers.get("content-disposition")?.split("filename=")[1]).toBe(`results_${taskID}.json`);
    expect(await res.json()).toMatchObject({
      participantCount: 3,
      participantStateChangedPerRule: [3],
      errorCount: 0,
      errors: [],
      dryRun: false,
    });
    // An admin may download it too; the task route itself still answers {task}.
    expect((await download("flu", taskID, admin)).status).toBe(200);
    const followed = await t.app.request(`/v1/studies/flu/data-exporter/participants/task/${taskID}`, {
      headers: { Authorization: `Bearer ${runner.token}` },
    });
    expect((await followed.json()).task).toMatchObject({ id: taskID, status: "completed" });
  });

  it("404 {error} while the task has no result: queued, running, failed, canceled, or its file removed", async () => {
    // First, while no other task of the study is open (a study runs one bulk task at a time).
    const removed = await completedRun("flu", runner.token);
    const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, removed));
    await rm(path.join(resultDir, row?.resultFile ?? "none"));
    const gone = await download("flu", removed, runner.token);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: expect.stringMatching(/result file not found/) as string });

    for (const status of ["queued", "in_progress", "failed", "canceled"] as const) {
      const taskID = await taskRow("flu", runner.subject, status);
      const res = await download("flu", taskID, runner.token);
      expect(res.status, status).toBe(404);
      const body = (await res.json()) as { error: string };
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error, status).toContain(status === "queued" || status === "in_progress" ? "no result yet" : status);
    }
    const failed = await taskRow("flu", runner.subject, "failed");
    expect(((await (await download("flu", failed, runner.token)).json()) as { error: string }).error).toContain(
      "rules failed to load",
    );
  });

  it("another study's task is 404 under this study; permissions as the task route: 401, 403", async () => {
    const otherRunner = await researcher(t, "other", "run-study-action");
    const [otherTask] = await t.database.db
      .insert(tasks)
      .values({
        studyKey: "other",
        kind: "run-actions",
        input: { rules: [], dryRun: false },
        createdBy: otherRunner.subject,
        status: "completed",
        resultFile: "whatever.json",
      })
      .returning();
    const otherID = otherTask?.id ?? "";
    // Under flu, with flu's permission (or as an admin): not a task of this study.
    for (const token of [runner.token, admin]) {
      const res = await download("flu", otherID, token);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: expect.any(String) as string });
    }
    // Under its own study without a grant there: 403.
    expect((await download("other", otherID, runner.token)).status).toBe(403);
    // Unknown or malformed ids: 404.
    expect((await download("flu", "00000000-0000-4000-8000-000000000000", runner.token)).status).toBe(404);
    expect((await download("flu", "not-a-uuid", runner.token)).status).toBe(404);

    const taskID = await taskRow("flu", runner.subject, "queued");
    expect((await download("flu", taskID)).status).toBe(401);
    // The participants-export permission alone does not open a run-actions task.
    const exporter = await researcher(t, "flu", "get-participant-states");
    const exporterAnswer = await download("flu", taskID, exporter.token);
    expect(exporterAnswer.status).toBe(403);
    expect(await exporterAnswer.json()).toEqual({ error: expect.any(String) as string });
    // Someone else's task: only its creator or an admin.
    const colleague = await researcher(t, "flu", "run-study-action");
    expect((await download("flu", taskID, colleague.token)).status).toBe(403);
  });
});
