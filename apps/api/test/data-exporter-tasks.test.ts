import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reports, storedFiles, surveyResponses, tasks, type Database } from "@studyflow/db";
import { FOOTER_PART, HEADER_PART, createFileStore } from "@studyflow/domain/files";
import { type TaskRow } from "@studyflow/domain/tasks";
import {
  bearer,
  call,
  insertParticipant,
  managementToken,
  onEvent,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { gunzipOneMember } from "@studyflow/testkit";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { TASKS_QUEUE } from "@studyflow/queue";
import { createApp } from "../src/app";
import { createTestApp, type TestApp } from "./test-app";

const exporter = (study: string) => `/v1/studies/${study}/data-exporter`;

/** Every task row of the app's database: a refused request must leave this unchanged. */
const allTasks = (db: Database) => db.select({ id: tasks.id }).from(tasks);

/**
 * Completes a task with a stored file, as a worker's finalisation leaves it, so the download can
 * be checked byte for byte without a worker (the worker-run path is covered by the replay and e2e).
 */
async function completeWithFile(
  db: Database,
  task: { id: string; studyKey: string },
  file: { name: string; contentType: string; gzip: boolean; parts: string[]; legacyGzipMembers?: boolean },
) {
  const store = createFileStore(db);
  await db.transaction(async (tx) => {
    let stored = await store.create(tx, {
      studyKey: task.studyKey,
      taskId: task.id,
      name: file.name,
      contentType: file.contentType,
      gzip: file.gzip,
    });
    if (file.legacyGzipMembers) {
      // as a gzip file written before migration 0032: a gzip member per part
      await tx.update(storedFiles).set({ gzipFraming: "members" }).where(eq(storedFiles.id, stored.id));
      stored = { ...stored, gzipFraming: "members" };
    }
    const [first, ...rest] = file.parts;
    await store.writePart(tx, stored, HEADER_PART, first ?? "", { rows: 0 });
    let seq = 0;
    for (const part of rest.slice(0, -1)) {
      await store.writePart(tx, stored, { chunkIndex: 0, seq }, part, { rows: 1 });
      seq += 1;
    }
    await store.writePart(tx, stored, FOOTER_PART, rest.at(-1) ?? "", { rows: 0 });
    await store.complete(tx, stored.id, seq);
    await tx.update(tasks).set({ status: "completed", resultFile: stored.name }).where(eq(tasks.id, task.id));
  });
}

describe("data-exporter export tasks (CASE)", () => {
  let t: TestApp;
  let admin: string;
  let owner: { subject: string; token: string };
  const base = exporter("flu-watch");

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch", rules: [onEvent("ENTER", call("UPDATE_FLAG", str("a"), str("b")))] });
    await setupStudy(t, { key: "other" });
    admin = await managementToken(t, "root", true);
    owner = await researcher(t, "flu-watch", "get-responses");
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("weekly"));
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("intake"));
    await uploadSurvey(t, "other", admin, caseSurvey("weekly"));
    const response = caseResponse("weekly", undefined);
    for (const [participantId, arrivedAt] of [
      ["p1", 1_780_000_200],
      ["p2", 1_780_100_000],
      ["p3", 1_780_200_000],
    ] as const) {
      await t.database.db.insert(surveyResponses).values({
        studyKey: "flu-watch",
        participantId,
        key: "weekly",
        openedAt: response.openedAt,
        submittedAt: response.submittedAt,
        arrivedAt,
        responses: response.responses,
        context: response.context,
      });
      await insertParticipant(t.database.db, { studyKey: "flu-watch", participantId });
    }
    await t.database.db.insert(reports).values([
      { studyKey: "flu-watch", participantId: "p1", key: "symptoms", eventType: "SUBMIT", timestamp: 1_780_000_300 },
      { studyKey: "flu-watch", participantId: "p2", key: "symptoms", eventType: "SUBMIT", timestamp: 1_780_100_300 },
      { studyKey: "flu-watch", participantId: "p2", key: "kit", eventType: "CUSTOM", timestamp: 1_780_200_300 },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
    t.app.request(path, { headers: { ...(token ? bearer(token) : {}), ...headers } });
  /** POST with no body, as case-admin starts every export. */
  const post = (path: string, token?: string) =>
    t.app.request(path, { method: "POST", headers: token ? bearer(token) : {} });

  describe("responses", () => {
    it("starts an export from case-admin's query (filter encoded twice), answers CASE's {task} and queues it", async () => {
      const filter = { $and: [{ arrivedAt: { $gt: 1_780_000_000 } }, { arrivedAt: { $lt: 1_780_150_000 } }] };
      const query = new URLSearchParams();
      query.append("filter", encodeURIComponent(JSON.stringify(filter)));
      query.append("format", "long");
      query.append("questionOptionSep", "|");
      query.append("surveyKey", "weekly");
      query.append("shortKeys", "true");
      query.append("extraContextColumns", "engineVersion,language");
      const res = await post(`${base}/responses?${query.toString()}`, owner.token);
      expect(res.status).toBe(200);
      const { task } = (await res.json()) as { task: Record<string, unknown> };
      expect(task).toMatchObject({
        status: "in_progress",
        studyflowStatus: "queued",
        targetCount: 2,
        processedCount: 0,
        createdBy: owner.subject,
        fileType: "text/csv",
        resultFile: "",
      });
      expect(task).not.toHaveProperty("error");
      expect(await t.deps.taskQueue.getJob(task.id as string)).toBeTruthy();
      const [row] = await t.database.db
        .select()
        .from(tasks)
        .where(eq(tasks.id, task.id as string));
      expect(row).toMatchObject({ kind: "export-responses", studyKey: "flu-watch" });
      expect(row!.input).toMatchObject({
        surveyKey: "weekly",
        format: "long",
        questionOptionSep: "|",
        shortKeys: true,
        extraContextColumns: ["engineVersion", "language"],
        filter,
        gzip: false,
      });
    });

    it("json format gives a JSON file type; gzip=true is kept; the trailing-slash path works too", async () => {
      const res = await post(`${base}/responses/?surveyKey=weekly&format=json&gzip=true`, owner.token);
      expect(res.status).toBe(200);
      const { task } = (await res.json()) as { task: { id: string; fileType: string; targetCount: number } };
      expect(task.fileType).toBe("application/json");
      expect(task.targetCount).toBe(3);
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
      expect(row!.input).toMatchObject({ format: "json", gzip: true });
    });

    it("answers as CASE when nothing matches: 200 {error: no responses to export}, no task", async () => {
      const before = await allTasks(t.database.db);
      const res = await post(`${base}/responses?surveyKey=intake`, owner.token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ error: "no responses to export" });
      expect(await allTasks(t.database.db)).toEqual(before);
    });

    it("400 naming the parameter for bad input, and no task is created", async () => {
      const before = await allTasks(t.database.db);
      const cases: [string, RegExp][] = [
        ["", /^surveyKey is required$/],
        ["surveyKey=daily", /^surveyKey: no survey "daily" in study "flu-watch"$/],
        ["surveyKey=weekly&format=xlsx", /format/],
        ["surveyKey=weekly&shortKeys=yes", /shortKeys/],
        ["surveyKey=weekly&gzip=please", /gzip/],
        ["surveyKey=weekly&includeMeta=position,colour", /^includeMeta: unknown "colour"/],
        [`surveyKey=weekly&filter=${encodeURIComponent('{"arrivedAt":{"$regex":"x"}}')}`, /\$regex/],
        [`surveyKey=weekly&filter=${encodeURIComponent('{"password":"x"}')}`, /password/],
        [`surveyKey=weekly&filter=${encodeURIComponent("{not json")}`, /^filter: /],
        [`surveyKey=weekly&sort=${encodeURIComponent('{"participantID":1}')}`, /^sort: /],
      ];
      for (const [query, message] of cases) {
        const res = await post(`${base}/responses?${query}`, owner.token);
        expect(res.status, query).toBe(400);
        expect((await res.json()).error, query).toMatch(message);
      }
      expect(await allTasks(t.database.db)).toEqual(before);
    });

    it("counts responses of a survey, with a filter", async () => {
      const count = async (query: string) => {
        const res = await get(`${base}/responses/count?${query}`, owner.token);
        expect(res.status).toBe(200);
        return ((await res.json()) as { count: number }).count;
      };
      expect(await count("surveyKey=weekly")).toBe(3);
      expect(await count("surveyKey=intake")).toBe(0);
      expect(
        await count(`surveyKey=weekly&filter=${encodeURIComponent('{"participantID":{"$in":["p1","p3"]}}')}`),
      ).toBe(2);
      const bad = await get(`${base}/responses/count?filter=${encodeURIComponent('{"$where":"1"}')}`, owner.token);
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toMatch(/\$where/);
    });

    it("401 without a token, 403 without get-responses, 404 for an unknown study", async () => {
      expect((await post(`${base}/responses?surveyKey=weekly`)).status).toBe(401);
      expect((await get(`${base}/responses/count?surveyKey=weekly`)).status).toBe(401);
      const states = await researcher(t, "flu-watch", "get-participant-states");
      expect((await post(`${base}/responses?surveyKey=weekly`, states.token)).status).toBe(403);
      expect((await get(`${base}/responses/count?surveyKey=weekly`, states.token)).status).toBe(403);
      expect((await post(`${exporter("other")}/responses?surveyKey=weekly`, owner.token)).status).toBe(403);
      expect((await post(`${exporter("nope")}/responses?surveyKey=weekly`, admin)).status).toBe(404);
      expect((await get(`${exporter("nope")}/responses/count`, admin)).status).toBe(404);
    });
  });

  it("answers the recorded task when the job queue refuses it (the sweeper queues it later)", async () => {
    // a queue whose Redis cannot be reached and which does not wait for it
    const unreachable = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const queue = new Queue(TASKS_QUEUE, { connection: unreachable, prefix: t.config.QUEUE_PREFIX });
    queue.on("error", () => undefined);
    try {
      const app = createApp({ ...t.deps, taskQueue: queue });
      const res = await app.request(`${base}/responses?surveyKey=weekly`, {
        method: "POST",
        headers: bearer(owner.token),
      });
      expect(res.status).toBe(200);
      const { task } = (await res.json()) as { task: { id: string; studyflowStatus: string } };
      expect(task.studyflowStatus).toBe("queued");
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
      expect(row?.status).toBe("queued");
    } finally {
      await queue.close().catch(() => undefined);
      unreachable.disconnect();
    }
  });

  describe("participants and reports", () => {
    it("counts and exports participants (JSON), 200 {error} when the filter matches none", async () => {
      const reader = await researcher(t, "flu-watch", "get-participant-states");
      const count = await get(
        `${base}/participants/count?filter=${encodeURIComponent('{"studyStatus":"active"}')}`,
        reader.token,
      );
      expect(count.status).toBe(200);
      expect(await count.json()).toEqual({ count: 3 });
      const res = await post(
        `${base}/participants?filter=${encodeURIComponent('{"participantID":"p2"}')}`,
        reader.token,
      );
      expect(res.status).toBe(200);
      const { task } = (await res.json()) as { task: { id: string; targetCount: number; fileType: string } };
      expect(task).toMatchObject({ targetCount: 1, fileType: "application/json" });
      const none = await post(
        `${base}/participants/?filter=${encodeURIComponent('{"studyStatus":"exited"}')}`,
        reader.token,
      );
      expect(await none.json()).toEqual({ error: "no participants to export" });
      const bad = await post(
        `${base}/participants?filter=${encodeURIComponent('{"flags.x":{"$foo":1}}')}`,
        reader.token,
      );
      expect(bad.status).toBe(400);
      expect((await post(`${base}/participants`, owner.token)).status).toBe(403);
    });

    it("counts and exports reports by key, participant and time window as case-admin asks", async () => {
      const reader = await researcher(t, "flu-watch", "get-reports");
      const count = async (query: string) =>
        ((await (await get(`${base}/reports/count?${query}`, reader.token)).json()) as { count: number }).count;
      expect(await count("")).toBe(3);
      expect(await count("reportKey=symptoms")).toBe(2);
      expect(await count("pid=p2")).toBe(2);
      expect(await count("from=1780100000&until=1780150000")).toBe(1);
      expect(await count("reportKey=kit&pid=p1")).toBe(0);
      const res = await post(`${base}/reports?reportKey=symptoms&type=csv`, reader.token);
      expect(res.status).toBe(200);
      const { task } = (await res.json()) as { task: { targetCount: number; fileType: string } };
      expect(task).toMatchObject({ targetCount: 2, fileType: "text/csv" });
      expect(await (await post(`${base}/reports?reportKey=nothing`, reader.token)).json()).toEqual({
        error: "no reports to export",
      });
      for (const [query, message] of [
        ["from=yesterday", /from must be a Unix time in whole seconds/],
        ["until=1.5", /until/],
        ["from=1780200000&until=1780100000", /^from \(1780200000\) is after until \(1780100000\)$/],
        ["type=xml", /type/],
      ] as const) {
        const bad = await post(`${base}/reports?${query}`, reader.token);
        expect(bad.status, query).toBe(400);
        expect((await bad.json()).error, query).toMatch(message);
      }
      expect((await get(`${base}/reports/count`, owner.token)).status).toBe(403);
    });
  });

  describe("task status and result", () => {
    let task: { id: string };

    beforeAll(async () => {
      const res = await post(`${base}/responses?surveyKey=weekly`, owner.token);
      task = ((await res.json()) as { task: { id: string } }).task;
    });

    it("shows the task to its creator and admins, in CASE's shape; 403 to a colleague", async () => {
      const mine = await get(`${base}/responses/task/${task.id}`, owner.token);
      expect(mine.status).toBe(200);
      expect(((await mine.json()) as { task: { id: string; status: string } }).task).toMatchObject({
        id: task.id,
        status: "in_progress",
      });
      expect((await get(`${base}/responses/task/${task.id}`, admin)).status).toBe(200);
      const colleague = await researcher(t, "flu-watch", "get-responses");
      const theirs = await get(`${base}/responses/task/${task.id}`, colleague.token);
      expect(theirs.status).toBe(403);
      expect((await get(`${base}/responses/task/${task.id}/result`, colleague.token)).status).toBe(403);
    });

    it("404 for another study's task, another kind's task, an unknown or malformed id", async () => {
      // the same task under another study, or under the participants or reports group
      expect((await get(`${exporter("other")}/responses/task/${task.id}`, admin)).status).toBe(404);
      expect((await get(`${base}/participants/task/${task.id}`, admin)).status).toBe(404);
      expect((await get(`${base}/reports/task/${task.id}/result`, admin)).status).toBe(404);
      // a run-actions task of the study is not an export
      const runActions = await postJson(
        t,
        "/v1/studies/flu-watch/run-actions/participants/",
        { rules: [call("UPDATE_FLAG", str("x"), str("y"))] },
        admin,
      );
      const runTask = ((await runActions.json()) as { task: { id: string } }).task;
      const foreignKind = await get(`${base}/responses/task/${runTask.id}`, admin);
      expect(foreignKind.status).toBe(404);
      expect((await foreignKind.json()).error).toBe(`task "${runTask.id}" not found`);
      for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-task"]) {
        expect((await get(`${base}/responses/task/${id}`, admin)).status).toBe(404);
      }
      expect((await get(`${base}/responses/task/${task.id}`)).status).toBe(401);
    });

    it("409 for the result while the task is queued, failed or canceled; failed shows as CASE's completed + error", async () => {
      const early = await get(`${base}/responses/task/${task.id}/result`, owner.token);
      expect(early.status).toBe(409);
      expect((await early.json()).error).toMatch(/^task is not completed \(status "queued"\)/);

      const res = await post(`${base}/responses?surveyKey=weekly`, owner.token);
      const failing = ((await res.json()) as { task: { id: string } }).task;
      await t.database.db.update(tasks).set({ status: "failed", error: "disk full" }).where(eq(tasks.id, failing.id));
      const status = await (await get(`${base}/responses/task/${failing.id}`, owner.token)).json();
      expect(status).toMatchObject({ task: { status: "completed", error: "disk full", studyflowStatus: "failed" } });
      const result = await get(`${base}/responses/task/${failing.id}/result`, owner.token);
      expect(result.status).toBe(409);
      expect((await result.json()).error).toBe("task failed: disk full; it has no file");
    });

    /** An export started through the API and completed with this file, as a worker leaves it. */
    const completedExport = async (
      file: { name: string; gzip: boolean; parts: string[]; legacyGzipMembers?: boolean },
      query = "",
    ) => {
      const res = await post(`${base}/responses?surveyKey=weekly${query}`, owner.token);
      const done = ((await res.json()) as { task: TaskRow }).task;
      await completeWithFile(
        t.database.db,
        { id: done.id, studyKey: "flu-watch" },
        { contentType: "text/csv", ...file },
      );
      return { done, url: `${base}/responses/task/${done.id}/result` };
    };

    it("streams a completed file as CASE's attachment with its type and length", async () => {
      // stored as written, as files were before every export was stored gzip
      const { done, url } = await completedExport({
        name: "weekly_wide_2026-11-26.csv",
        gzip: false,
        parts: ["participantID,weekly.Q1\n", "p1,2\n", "p2,2\n", ""],
      });
      const file = await get(url, owner.token);
      expect(file.status).toBe(200);
      expect(file.headers.get("Content-Type")).toBe("text/csv");
      expect(file.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_wide_2026-11-26.csv");
      expect(file.headers.get("Content-Length")).toBe(String("participantID,weekly.Q1\np1,2\np2,2\n".length));
      expect(file.headers.get("Content-Encoding")).toBeNull();
      expect(await file.text()).toBe("participantID,weekly.Q1\np1,2\np2,2\n");
      const status = await (await get(`${base}/responses/task/${done.id}`, owner.token)).json();
      expect(status).toMatchObject({ task: { status: "completed", studyflowStatus: "completed" } });
      expect(status.task).not.toHaveProperty("error");
    });

    it("sends a plain export, stored gzip as the workers write every export, gzip to clients that take it and as the file to others", async () => {
      const text = "participantID,weekly.Q1\np1,2\np2,2\np3,ü\n";
      const { url } = await completedExport({
        name: "weekly_wide_2026-11-26.csv",
        gzip: true,
        parts: ["participantID,weekly.Q1\n", "p1,2\n", "p2,2\n", "p3,ü\n", ""],
      });
      const plain = await get(url, owner.token, { "Accept-Encoding": "identity" });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("Content-Encoding")).toBeNull();
      expect(plain.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_wide_2026-11-26.csv");
      // the file's own length, kept when the file completed
      expect(plain.headers.get("Content-Length")).toBe(String(Buffer.byteLength(text)));
      expect(await plain.text()).toBe(text);

      const gz = await get(url, owner.token, { "Accept-Encoding": "gzip" });
      expect(gz.headers.get("Content-Encoding")).toBe("gzip");
      expect(gz.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_wide_2026-11-26.csv");
      const bytes = Buffer.from(await gz.arrayBuffer());
      expect(gz.headers.get("Content-Length")).toBe(String(bytes.length));
      expect(gunzipOneMember(bytes).toString("utf8")).toBe(text);
    });

    it("sends a gzip file as one gzip member with Content-Encoding to clients that accept it, decompressed to those that do not", async () => {
      const { url } = await completedExport(
        { name: "weekly wide.csv.gz", gzip: true, parts: ["a,b\n", "1,2\n", "3,4\n", "5,6\n", ""] },
        "&gzip=true",
      );
      const gz = await get(url, owner.token, { "Accept-Encoding": "gzip, deflate, br" });
      expect(gz.status).toBe(200);
      expect(gz.headers.get("Content-Encoding")).toBe("gzip");
      expect(gz.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_wide.csv");
      const bytes = Buffer.from(await gz.arrayBuffer());
      expect(gz.headers.get("Content-Length")).toBe(String(bytes.length));
      // one member: a browser or curl that decodes Content-Encoding reads every part, not the first
      expect(gunzipOneMember(bytes).toString("utf8")).toBe("a,b\n1,2\n3,4\n5,6\n");

      const plain = await get(url, owner.token, { "Accept-Encoding": "identity" });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("Content-Encoding")).toBeNull();
      expect(await plain.text()).toBe("a,b\n1,2\n3,4\n5,6\n");
    });

    it("sends a gzip file stored as a member per part (before migration 0032) decompressed, to every client", async () => {
      const { url } = await completedExport(
        { name: "weekly wide.csv.gz", gzip: true, parts: ["a,b\n", "1,2\n", "3,4\n", ""], legacyGzipMembers: true },
        "&gzip=true",
      );
      for (const accept of ["gzip, deflate, br", "identity"]) {
        const sent = await get(url, owner.token, { "Accept-Encoding": accept });
        expect(sent.status).toBe(200);
        expect(sent.headers.get("Content-Encoding")).toBeNull();
        expect(sent.headers.get("Content-Length")).toBeNull();
        expect(sent.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_wide.csv");
        expect(await sent.text()).toBe("a,b\n1,2\n3,4\n");
      }
    });

    it("404 with a clear error once retention removed the file", async () => {
      const res = await post(`${base}/responses?surveyKey=weekly`, owner.token);
      const done = ((await res.json()) as { task: TaskRow }).task;
      await completeWithFile(
        t.database.db,
        { id: done.id, studyKey: "flu-watch" },
        {
          name: "weekly.csv",
          contentType: "text/csv",
          gzip: false,
          parts: ["h\n", ""],
        },
      );
      await t.database.db.update(storedFiles).set({ expiredAt: new Date() }).where(eq(storedFiles.taskId, done.id));
      const gone = await get(`${base}/responses/task/${done.id}/result`, owner.token);
      expect(gone.status).toBe(404);
      expect((await gone.json()).error).toMatch(/expired .* and was removed; export again/);
    });
  });
  describe("export tasks among the study's tasks", () => {
    it("lists them by kind, and the run-actions result route points to the exporter's download", async () => {
      const started = await post(`${base}/responses?surveyKey=weekly&format=wide`, admin);
      expect(started.status).toBe(200);
      const { task } = (await started.json()) as { task: { id: string } };

      const listed = await get(`/v1/studies/flu-watch/run-actions/participants/tasks?kind=export-responses`, admin);
      expect(listed.status).toBe(200);
      const { tasks: items } = (await listed.json()) as { tasks: { id: string; kind: string }[] };
      expect(items.map((item) => item.id)).toContain(task.id);
      expect(new Set(items.map((item) => item.kind))).toEqual(new Set(["export-responses"]));

      const unknownKind = await get(`/v1/studies/flu-watch/run-actions/participants/tasks?kind=backup`, admin);
      expect(unknownKind.status).toBe(400);
      expect(((await unknownKind.json()) as { error: string }).error).toContain("export-responses");

      const result = await get(`/v1/studies/flu-watch/run-actions/participants/task/${task.id}/result`, admin);
      expect(result.status).toBe(404);
      expect(await result.json()).toEqual({
        error: `task ${task.id} is an export: download its file from /v1/studies/flu-watch/data-exporter/responses/task/${task.id}/result`,
      });
    });
  });
});

describe("data-exporter downloads from the filesystem file store (EXPORT_FILE_STORE=filesystem)", () => {
  let t: TestApp;
  let resultDir: string;

  beforeAll(async () => {
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-export-files-"));
    t = await createTestApp({ env: { EXPORT_FILE_STORE: "filesystem", RESULT_DIR: resultDir } });
    await setupStudy(t, { key: "flu-watch" });
  });
  afterAll(async () => {
    await t.close();
    await rm(resultDir, { recursive: true, force: true });
  });

  it("reads the file where the workers, configured alike, wrote it", async () => {
    const owner = await researcher(t, "flu-watch", "get-participant-states");
    await insertParticipant(t.database.db, { studyKey: "flu-watch", participantId: "p1" });
    const res = await t.app.request("/v1/studies/flu-watch/data-exporter/participants", {
      method: "POST",
      headers: bearer(owner.token),
    });
    const { task } = (await res.json()) as { task: { id: string } };
    const store = createFileStore(t.database.db, { backend: "filesystem", directory: resultDir });
    await t.database.db.transaction(async (tx) => {
      const file = await store.create(tx, {
        studyKey: "flu-watch",
        taskId: task.id,
        name: "participants.json",
        contentType: "application/json",
        gzip: false,
      });
      await store.writePart(tx, file, HEADER_PART, '{"participants": [', { rows: 0 });
      await store.writePart(tx, file, { chunkIndex: 0, seq: 0 }, '{"participantId":"p1"}', { rows: 1 });
      await store.writePart(tx, file, FOOTER_PART, "]}", { rows: 0 });
      await store.complete(tx, file.id, 1);
      await tx.update(tasks).set({ status: "completed" }).where(eq(tasks.id, task.id));
    });
    const file = await t.app.request(`/v1/studies/flu-watch/data-exporter/participants/task/${task.id}/result`, {
      headers: bearer(owner.token),
    });
    expect(file.status).toBe(200);
    expect(await file.json()).toEqual({ participants: [{ participantId: "p1" }] });
  });
});
