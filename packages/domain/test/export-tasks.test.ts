// Export tasks on the chunk pipeline: a file written chunk by chunk, batch by batch (stopped and
// resumed in between), reads back byte for byte as formatting every row at once would give it, in
// every format, gzip or not, on either file store backend; bad requests create nothing.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createParticipantFormatter,
  createReportFormatter,
  createResponseFormatter,
  type ExportFormatter,
  type IncludeMeta,
} from "@studyflow/case-export";
import {
  participants,
  reports,
  storedFileParts,
  surveyResponses,
  surveyVersions,
  tasks,
  type ResponseExportInput,
} from "@studyflow/db";
import { Conflict, Invalid, NotFound } from "@studyflow/domain/errors";
import {
  countParticipants,
  countReports,
  countResponses,
  createParticipantExportTask,
  createReportExportTask,
  createResponseExportTask,
  openTaskFile,
  type ResponseExportRequest,
} from "@studyflow/domain/exports";
import { createFileStore, type FileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { addSyntheticParticipants, createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { cancelTask, type TaskRow } from "@studyflow/domain/tasks";
import { createTestDatabase, gunzipOneMember, type TestDatabase } from "@studyflow/testkit";

const NOW_MS = Date.UTC(2031, 4, 1);
const STUDY = "exp";
const RESPONSES = 57;
const NO_META: IncludeMeta = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };

const content = (en: string) => [{ code: "en", parts: [{ str: en, dtype: "str" }] }];
const survey = {
  props: { name: content("intake") },
  surveyDefinition: {
    key: "intake",
    items: [
      {
        key: "intake.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: content("Do you smoke?") },
            {
              key: "rg",
              role: "responseGroup",
              items: [
                {
                  role: "singleChoiceGroup",
                  key: "scg",
                  items: [
                    { role: "option", key: "yes", content: content("Yes") },
                    { role: "option", key: "no", content: content("No") },
                  ],
                },
              ],
            },
          ],
        },
      },
      {
        key: "intake.Q2",
        components: {
          role: "root",
          items: [
            { role: "title", content: content("Comment") },
            { key: "rg", role: "responseGroup", items: [{ role: "input", key: "txt", content: content("Text") }] },
          ],
        },
      },
    ],
  },
};

const request = (overrides: Partial<ResponseExportRequest> = {}): ResponseExportRequest => ({
  surveyKey: "intake",
  format: "wide",
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: NO_META,
  gzip: false,
  ...overrides,
});

describe("export tasks", () => {
  let database: TestDatabase;
  let directory: string;
  let postgresStore: FileStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    directory = await mkdtemp(path.join(tmpdir(), "sf-exports-"));
    postgresStore = createFileStore(database.db);
    await createStudy(database.db, { key: STUDY });
    await createStudy(database.db, { key: "other" });
    await publishSurveyVersion(database.db, { studyKey: STUDY, actor: "test", survey }, { clock: () => NOW_MS });
    await addSyntheticParticipants(database.db, { studyKey: STUDY, count: 23, enteredAt: 100 });
    await database.db.execute(sql`update participants set flags = jsonb_build_object('n', participant_id)
      where study_key = ${STUDY}`);
    // Arrival times repeat (i % 20) so that ties are broken by id; submission times run the other way.
    await database.db.insert(surveyResponses).values(
      Array.from({ length: RESPONSES }, (_, i) => ({
        studyKey: STUDY,
        participantId: `p${String(i % 23).padStart(9, "0")}`,
        key: "intake",
        versionId: "",
        openedAt: 1_000 + i,
        submittedAt: 5_000 - i,
        arrivedAt: 2_000 + (i % 20),
        responses: [
          {
            key: "intake.Q1",
            response: { key: "rg", items: [{ key: "scg", items: [{ key: i % 2 ? "yes" : "no" }] }] },
          },
          { key: "intake.Q2", response: { key: "rg", items: [{ key: "txt", value: `comment, "${i}"` }] } },
        ],
        context: { language: "en" },
      })),
    );
    await database.db.insert(surveyResponses).values({
      studyKey: "other",
      participantId: "p000000001",
      key: "intake",
      arrivedAt: 2_000,
    });
    await database.db.insert(reports).values(
      Array.from({ length: 31 }, (_, i) => ({
        studyKey: STUDY,
        participantId: `p${String(i % 23).padStart(9, "0")}`,
        key: i % 3 ? "visit" : "alert",
        eventType: "SUBMIT",
        timestamp: 3_000 + (i % 7),
        data: [{ key: i % 2 ? "score" : "level", value: String(i), dtype: "int" }],
      })),
    );
  });
  afterAll(async () => {
    await database.drop();
    await rm(directory, { recursive: true, force: true });
  });

  /** Plans the task into chunks of `chunkSize`, runs each in batches of `batchSize`, stopping after the first batch once. */
  async function runExport(task: TaskRow, store: FileStore, chunkSize = 10, batchSize = 4) {
    const planned = await planTask(database.db, task.id, { clock: systemClock, chunkSize, files: store });
    if (planned.status !== "planned") throw new Error(`not planned: ${planned.status}`);
    for (const { chunkIndex } of planned.chunks) {
      let asked = 0;
      const options = { clock: () => NOW_MS, batchSize, files: store };
      // stopped after one batch, as a shutting-down worker; the next run resumes at the checkpoint
      const first = await processChunk(database.db, task.id, chunkIndex, {
        ...options,
        shouldStop: () => asked++ === 1,
      });
      if (first === "stopped") expect(await processChunk(database.db, task.id, chunkIndex, options)).toBe("done");
      else expect(first).toBe("done");
    }
    expect(await finalizeIfComplete(database.db, task.id, directory, () => NOW_MS, store)).toBe("completed");
    const [done] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    return { task: done!, chunks: planned.chunks.length };
  }

  async function download(task: TaskRow, store: FileStore) {
    const file = await openTaskFile(database.db, store, task);
    const parts: Buffer[] = [];
    for await (const part of file.body) parts.push(part as Buffer);
    const bytes = Buffer.concat(parts);
    expect(bytes.length).toBe(file.size);
    // every export is stored gzip, one member: what a browser decoding Content-Encoding: gzip reads whole
    expect(file.contentEncoding).toBe("gzip");
    const content = gunzipOneMember(bytes);
    expect(content.length).toBe(file.plainSize);
    return { file, text: content.toString("utf8") };
  }

  const atOnce = <Row>(formatter: ExportFormatter<Row>, rows: Row[]) =>
    formatter.start() + formatter.format(rows, false).text + formatter.end(rows.length > 0);

  async function expectedResponses(input: ResponseExportInput, order: "arrived" | "submitted-desc" = "arrived") {
    const versions = (
      await database.db
        .select()
        .from(surveyVersions)
        .where(and(eq(surveyVersions.studyKey, STUDY), eq(surveyVersions.surveyKey, input.surveyKey)))
    ).map((row) => ({
      versionId: row.versionId,
      publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
      unpublishedAt: null,
      definition: row.definition,
    }));
    const rows = await database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.key, input.surveyKey)))
      .orderBy(
        ...(order === "arrived"
          ? [asc(surveyResponses.arrivedAt), asc(surveyResponses.id)]
          : [desc(surveyResponses.submittedAt), desc(surveyResponses.id)]),
      );
    const formatter = createResponseFormatter(input.surveyKey, versions, {
      format: input.format,
      questionOptionSep: input.questionOptionSep,
      shortKeys: input.shortKeys,
      extraContextColumns: input.extraContextColumns,
      includeMeta: NO_META,
      accountColumns: false,
      now: input.now,
    });
    const exportRows = rows.map((row) => ({ ...row, account: { accountId: null, mainProfile: null } }));
    return atOnce(formatter, exportRows);
  }

  /** A response export of `format` planned into chunks of 10, none of them run yet. */
  async function plannedExport(format: "wide" | "json") {
    const created = await createResponseExportTask(database.db, STUDY, request({ format }), "researcher", {
      clock: systemClock,
    });
    const planned = await planTask(database.db, created.id, {
      clock: systemClock,
      chunkSize: 10,
      files: postgresStore,
    });
    if (planned.status !== "planned") throw new Error("not planned");
    return { taskId: created.id, chunks: planned.chunks };
  }

  /** Finalises the task whose chunks all ran; its file must be what the formatter writes at once. */
  async function expectFinalisedAsAtOnce(taskId: string) {
    expect(await finalizeIfComplete(database.db, taskId, directory, () => NOW_MS)).toBe("completed");
    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
    const { text } = await download(task!, postgresStore);
    expect(text).toBe(await expectedResponses(task!.input as ResponseExportInput));
    return text;
  }

  for (const format of ["wide", "long", "json"] as const) {
    for (const gzip of [false, true]) {
      it(`writes a ${format} response export${gzip ? ", gzip," : ""} chunk by chunk as one file`, async () => {
        const created = await createResponseExportTask(database.db, STUDY, request({ format, gzip }), "researcher", {
          clock: systemClock,
        });
        expect(created).toMatchObject({ status: "queued", kind: "export-responses", targetCount: RESPONSES });
        expect(created.fileType).toBe(format === "json" ? "application/json" : "text/csv");
        const { task, chunks } = await runExport(created, postgresStore);
        expect(chunks).toBeGreaterThan(5);
        expect(task).toMatchObject({ status: "completed", processedCount: RESPONSES, targetCount: RESPONSES });
        const { file, text } = await download(task, postgresStore);
        expect(file.fileName).toMatch(
          new RegExp(`^intake_${format}_\\d{8}-\\d{6}\\.(csv|json)${gzip ? "\\.gz" : ""}$`),
        );
        expect(task.resultFile).toBe(file.fileName);
        expect(file.rows).toBe(RESPONSES);
        // a .gz file when asked for; its content otherwise, stored compressed all the same
        expect(file.gzipFile).toBe(gzip);
        expect(text).toBe(await expectedResponses(task.input as ResponseExportInput));
      });
    }
  }

  it("keeps json valid when the first chunks turn out empty: the separator before the first row is dropped", async () => {
    const { taskId, chunks } = await plannedExport("json");
    // chunk 0 and 1 find nothing: their rows move to another survey key after planning
    const moved = await database.db.execute<{ id: string }>(sql`
      update survey_responses set key = 'moved' where id in (
        select id from survey_responses where study_key = ${STUDY} and key = 'intake'
        order by arrived_at, id limit 20) returning id`);
    try {
      for (const { chunkIndex } of chunks) {
        expect(await processChunk(database.db, taskId, chunkIndex, { clock: () => NOW_MS, batchSize: 3 })).toBe("done");
      }
      const parsed = JSON.parse(await expectFinalisedAsAtOnce(taskId)) as { responses: unknown[] };
      expect(parsed.responses).toHaveLength(RESPONSES - 20);
    } finally {
      await database.db.execute(
        sql`update survey_responses set key = 'intake' where id in (${sql.join(
          moved.map((row) => sql`${row.id}::uuid`),
          sql`, `,
        )})`,
      );
    }
  });

  it("finishes a chunk on the batch that reads up to its bound, without a batch that reads nothing", async () => {
    const { taskId, chunks } = await plannedExport("wide");
    expect(chunks.length).toBe(6);
    for (const { chunkIndex } of chunks) {
      // ten rows in batches of five: two batches, then the chunk is done without asking for a third
      let batches = 0;
      const outcome = await processChunk(database.db, taskId, chunkIndex, {
        clock: () => NOW_MS,
        batchSize: 5,
        shouldStop: () => batches++ === 2,
      });
      // (the last chunk, of 57 % 10 = 7 rows, is done on its short second batch)
      expect(outcome).toBe("done");
    }
    await expectFinalisedAsAtOnce(taskId);
  });

  it("writes the same bytes through the filesystem backend", async () => {
    const store = createFileStore(database.db, { backend: "filesystem", directory });
    const created = await createResponseExportTask(database.db, STUDY, request({ format: "json", gzip: true }), "r", {
      clock: systemClock,
    });
    const { task } = await runExport(created, store, 7, 3);
    const { text } = await download(task, store);
    expect(text).toBe(await expectedResponses(task.input as ResponseExportInput));
    // nothing went into the database's parts
    const parts = await database.db.select().from(storedFileParts);
    expect(parts.every((part) => part.fileId !== task.id)).toBe(true);
  });

  it("orders by CASE's sort, submittedAt descending, ties by id", async () => {
    const created = await createResponseExportTask(
      database.db,
      STUDY,
      request({ format: "long", sort: { submittedAt: -1 } }),
      "researcher",
      { clock: systemClock },
    );
    const { task } = await runExport(created, postgresStore, 8, 5);
    const { text } = await download(task, postgresStore);
    expect(text).toBe(await expectedResponses(task.input as ResponseExportInput, "submitted-desc"));
  });

  it("exports only what the filter selects, and counts the same", async () => {
    const filter = { participantID: { $in: ["p000000001", "p000000002"] } };
    const count = await countResponses(database.db, STUDY, { surveyKey: "intake", filter });
    expect(count).toBe(6);
    const created = await createResponseExportTask(database.db, STUDY, request({ format: "json", filter }), "r", {
      clock: systemClock,
    });
    expect(created.targetCount).toBe(count);
    const { task } = await runExport(created, postgresStore, 2, 1);
    const { text } = await download(task, postgresStore);
    const ids = (JSON.parse(text) as { responses: { participantID: string }[] }).responses.map((r) => r.participantID);
    expect(ids).toHaveLength(6);
    expect(new Set(ids)).toEqual(new Set(["p000000001", "p000000002"]));
    expect(task.processedCount).toBe(6);
  });

  it("exports participants and reports as their formatters write them at once", async () => {
    const participantTask = await createParticipantExportTask(database.db, STUDY, { gzip: true }, "r");
    expect(participantTask.targetCount).toBe(await countParticipants(database.db, STUDY, {}));
    const participantRun = await runExport(participantTask, postgresStore, 5, 2);
    const allParticipants = await database.db
      .select()
      .from(participants)
      .where(eq(participants.studyKey, STUDY))
      .orderBy(asc(participants.participantId));
    expect((await download(participantRun.task, postgresStore)).text).toBe(
      atOnce(createParticipantFormatter({ studyKey: STUDY }), allParticipants),
    );

    for (const format of ["raw", "csv"] as const) {
      const reportTask = await createReportExportTask(
        database.db,
        STUDY,
        { reportKey: "visit", format, sort: { timestamp: -1 }, gzip: false },
        "r",
      );
      expect(reportTask.targetCount).toBe(await countReports(database.db, STUDY, { reportKey: "visit" }));
      const reportRun = await runExport(reportTask, postgresStore, 6, 4);
      const rows = await database.db
        .select()
        .from(reports)
        .where(and(eq(reports.studyKey, STUDY), eq(reports.key, "visit")))
        .orderBy(desc(reports.timestamp), desc(reports.id));
      const formatter =
        format === "raw"
          ? createReportFormatter({ format: "json" })
          : createReportFormatter({ format: "csv", dataKeys: ["level", "score"] });
      expect((await download(reportRun.task, postgresStore)).text).toBe(atOnce(formatter, rows));
    }
  });

  it("adds the account columns when the study tracks accounts, from the participant's row", async () => {
    await createStudy(database.db, { key: "tracked", trackAccount: true });
    await publishSurveyVersion(database.db, { studyKey: "tracked", actor: "t", survey }, { clock: () => NOW_MS });
    await database.db.insert(participants).values([
      {
        studyKey: "tracked",
        participantId: "a",
        studyStatus: "active",
        enteredAt: 1,
        modifiedAt: 1,
        hashedAccountId: "h-a",
        isMainProfile: true,
      },
      {
        studyKey: "tracked",
        participantId: "b",
        studyStatus: "active",
        enteredAt: 1,
        modifiedAt: 1,
        hashedAccountId: "h-b",
        isMainProfile: false,
      },
    ]);
    await database.db.insert(surveyResponses).values(
      ["a", "b", "c"].map((participantId, i) => ({
        studyKey: "tracked",
        participantId,
        key: "intake",
        arrivedAt: 10 + i,
      })),
    );
    const created = await createResponseExportTask(database.db, "tracked", request({ format: "json" }), "r", {
      clock: systemClock,
    });
    expect((created.input as ResponseExportInput).accountColumns).toBe(true);
    const { task } = await runExport(created, postgresStore, 2, 1);
    const { text } = await download(task, postgresStore);
    const rows = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.studyKey, "tracked"))
      .orderBy(asc(surveyResponses.arrivedAt), asc(surveyResponses.id));
    const accounts: Record<string, { accountId: string | null; mainProfile: boolean | null }> = {
      a: { accountId: "h-a", mainProfile: true },
      b: { accountId: "h-b", mainProfile: false },
      c: { accountId: null, mainProfile: null },
    };
    const [version] = await database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, "tracked"));
    const formatter = createResponseFormatter(
      "intake",
      [
        {
          versionId: version!.versionId,
          publishedAt: Math.floor(version!.publishedAt.getTime() / 1000),
          unpublishedAt: null,
          definition: version!.definition,
        },
      ],
      {
        format: "json",
        questionOptionSep: "-",
        shortKeys: false,
        extraContextColumns: [],
        includeMeta: NO_META,
        accountColumns: true,
        now: (task.input as ResponseExportInput).now,
      },
    );
    expect(text).toBe(
      atOnce(
        formatter,
        rows.map((row) => ({ ...row, account: accounts[row.participantId] ?? null })),
      ),
    );
    expect(text).toContain("h-b");
  });

  it("refuses a bad request with an error naming the field and records no task", async () => {
    const before = await database.db.$count(tasks);
    const cases: [() => Promise<unknown>, RegExp][] = [
      [
        () => createResponseExportTask(database.db, STUDY, request({ surveyKey: "nope" }), "r", { clock: systemClock }),
        /^surveyKey: no survey "nope" in study "exp"/,
      ],
      [
        () =>
          createResponseExportTask(database.db, STUDY, request({ format: "xml" as "wide" }), "r", {
            clock: systemClock,
          }),
        /^format: /,
      ],
      [
        () =>
          createResponseExportTask(database.db, STUDY, request({ filter: { $where: "1" } }), "r", {
            clock: systemClock,
          }),
        /^filter: /,
      ],
      [
        () => createResponseExportTask(database.db, STUDY, request({ sort: { key: 1 } }), "r", { clock: systemClock }),
        /^sort: /,
      ],
      [
        () =>
          createResponseExportTask(database.db, STUDY, request({ extraContextColumns: [""] }), "r", {
            clock: systemClock,
          }),
        /^extraContextColumns/,
      ],
      [() => createParticipantExportTask(database.db, STUDY, { sort: { enteredAt: -1 }, gzip: false }, "r"), /^sort: /],
      [() => createReportExportTask(database.db, STUDY, { format: "xls" as "csv", gzip: false }, "r"), /^format: /],
    ];
    for (const [attempt, message] of cases) {
      const error = await attempt().then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(Invalid);
      expect((error as Error).message).toMatch(message);
    }
    await expect(
      createResponseExportTask(database.db, "missing", request(), "r", { clock: systemClock }),
    ).rejects.toBeInstanceOf(NotFound);
    expect(await database.db.$count(tasks)).toBe(before);
  });

  it("stops a canceled export after the batch in flight; its file cannot be downloaded", async () => {
    const created = await createResponseExportTask(database.db, STUDY, request(), "researcher", { clock: systemClock });
    const planned = await planTask(database.db, created.id, {
      clock: systemClock,
      chunkSize: 100,
      files: postgresStore,
    });
    if (planned.status !== "planned") throw new Error("not planned");
    let batches = 0;
    const outcome = await processChunk(database.db, created.id, 0, {
      clock: () => NOW_MS,
      batchSize: 5,
      onBatch: async () => {
        if (++batches === 2)
          await cancelTask(database.db, created, { subject: "researcher", isAdmin: false }, { clock: systemClock });
      },
    });
    expect(outcome).toBe("canceled");
    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, created.id));
    expect(task).toMatchObject({ status: "canceled", processedCount: 10 });
    await expect(openTaskFile(database.db, postgresStore, task!)).rejects.toBeInstanceOf(Conflict);
  });
});
