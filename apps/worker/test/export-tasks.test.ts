// Exports through the worker: queued like any task, split into chunks that two workers share,
// and after a SIGKILL mid-run resumed by another worker into one file with every response once,
// in order, byte for byte what formatting every row at once gives.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { and, asc, eq, sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createResponseFormatter } from "@studyflow/case-export";
import { storedFiles, surveyResponses, surveyVersions, type ResponseExportInput } from "@studyflow/db";
import { createResponseExportTask, openTaskFile, type ResponseExportRequest } from "@studyflow/domain/exports";
import { createFileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { type TaskRow } from "@studyflow/domain/tasks";
import { queueTask } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const content = (en: string) => [{ code: "en", parts: [{ str: en, dtype: "str" }] }];
const survey = {
  surveyDefinition: {
    key: "weekly",
    items: [
      {
        key: "weekly.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: content("How are you?") },
            { key: "rg", role: "responseGroup", items: [{ role: "input", key: "txt", content: content("Text") }] },
          ],
        },
      },
    ],
  },
};
const noMeta = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };
const request = (format: ResponseExportRequest["format"], gzip: boolean): ResponseExportRequest => ({
  surveyKey: "weekly",
  format,
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: noMeta,
  gzip,
});

/** A worker process (child-worker.ts) with batches of `batchSize`, in its own process group. */
function startChild(h: WorkerHarness, batchSize: number): Promise<ChildProcess> {
  const child = spawn("npx", ["tsx", "apps/worker/test/child-worker.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: h.database.url,
      REDIS_URL: testRedisUrl,
      QUEUE_PREFIX: h.prefix,
      RESULT_DIR: h.resultDir,
      BATCH_SIZE: String(batchSize),
    },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`child worker exited early (${code})`)));
  });
}

describe("export tasks in the worker", () => {
  let h: WorkerHarness;
  beforeEach(async () => {
    h = await createWorkerHarness();
    await createStudy(h.database.db, { key: "s" });
    await publishSurveyVersion(h.database.db, { studyKey: "s", actor: "t", survey }, { clock: () => 1_000_000 });
  });
  afterEach(async () => {
    await h.close();
  });

  async function addResponses(count: number) {
    await h.database.db.execute(sql`
      insert into survey_responses (study_key, participant_id, key, arrived_at, submitted_at, responses)
      select 's', 'p' || (i % 97), 'weekly', 1700000000 + (i % 500), 1700000000 + i,
        jsonb_build_array(jsonb_build_object('key', 'weekly.Q1', 'response',
          jsonb_build_object('key', 'rg', 'items', jsonb_build_array(jsonb_build_object('key', 'txt', 'value', 'answer ' || i)))))
      from generate_series(1, ${count}) as i`);
  }

  async function download(task: TaskRow) {
    const file = await openTaskFile(h.database.db, createFileStore(h.database.db), task);
    const parts: Buffer[] = [];
    for await (const part of file.body) parts.push(part as Buffer);
    const bytes = Buffer.concat(parts);
    return (file.contentEncoding === "gzip" ? gunzipSync(bytes) : bytes).toString("utf8");
  }

  /** The file formatting every response of the export at once would give. */
  async function atOnce(task: TaskRow) {
    const input = task.input as ResponseExportInput;
    const versions = (
      await h.database.db.select().from(surveyVersions).where(eq(surveyVersions.surveyKey, "weekly"))
    ).map((row) => ({
      versionId: row.versionId,
      publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
      unpublishedAt: null,
      definition: row.definition,
    }));
    const rows = await h.database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, "s"), eq(surveyResponses.key, "weekly")))
      .orderBy(asc(surveyResponses.arrivedAt), asc(surveyResponses.id));
    const formatter = createResponseFormatter("weekly", versions, {
      format: input.format,
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: noMeta,
      accountColumns: false,
      now: input.now,
    });
    const exportRows = rows.map((row) => ({ ...row, account: { accountId: null, mainProfile: null } }));
    return {
      text: formatter.start() + formatter.format(exportRows, false).text + formatter.end(rows.length > 0),
      rows,
    };
  }

  it("two workers share an export's chunks and complete it with its file", async () => {
    await addResponses(2_000);
    h.start({ batchSize: 40, chunkSize: 300 });
    h.start({ batchSize: 40, chunkSize: 300 });
    const created = await createResponseExportTask(h.database.db, "s", request("wide", true), "researcher", {
      clock: systemClock,
    });
    await queueTask(h.queue, created);
    const done = await h.waitForTask(created.id, ["completed", "failed"]);
    expect(done).toMatchObject({
      status: "completed",
      processedCount: 2_000,
      targetCount: 2_000,
      fileType: "text/csv",
    });
    const chunks = await h.database.db.execute<{ count: number }>(
      sql`select count(*)::int as count from task_chunks where task_id = ${created.id}`,
    );
    expect(chunks[0]?.count).toBe(7);
    expect(await download(done)).toBe((await atOnce(done)).text);
  });

  it("an export survives a worker SIGKILL mid-run: one file, every response once, in order", async () => {
    await addResponses(3_000);
    const child = await startChild(h, 10);
    const created = await createResponseExportTask(h.database.db, "s", request("json", false), "researcher", {
      clock: systemClock,
    });
    await queueTask(h.queue, created);
    for (;;) {
      const row = await h.task(created.id);
      if (row.processedCount >= 300) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    process.kill(-child.pid!, "SIGKILL");
    const atKill = await h.task(created.id);
    expect(atKill.status).toBe("in_progress");
    expect(atKill.processedCount).toBeLessThan(3_000);

    h.start({ batchSize: 50, lockDurationMs: 2_000, stalledIntervalMs: 1_000 });
    const done = await h.waitForTask(created.id, ["completed", "failed"], 90_000);
    expect(done).toMatchObject({ status: "completed", processedCount: 3_000 });
    const [file] = await h.database.db.select().from(storedFiles).where(eq(storedFiles.taskId, created.id));
    expect(file).toMatchObject({ complete: true, rows: 3_000 });
    const text = await download(done);
    const expected = await atOnce(done);
    const ids = (JSON.parse(text) as { responses: { ID: string }[] }).responses.map((response) => response.ID);
    expect(ids).toEqual(expected.rows.map((row) => row.id));
    expect(text).toBe(expected.text);
  });
});
