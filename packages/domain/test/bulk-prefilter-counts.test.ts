// A bulk run that reads only the rows its prefilter selects still counts every eligible
// participant of every chunk, exactly once, across stops and resumes, and its per-rule counts,
// dry runs and result document stay what evaluating everyone would give.
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { participants, taskChunks, tasks } from "@studyflow/db";
import { type RunActionsResult } from "@studyflow/domain/bulk";
import { systemClock } from "@studyflow/domain/foundation";
import { addSyntheticParticipants, createStudy } from "@studyflow/domain/study-setup";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { sampledChunkBoundaries } from "../src/bulk/run-actions-kind";
import { createRunActionsTask, type BatchRunner } from "@studyflow/domain/tasks";
import type { Expression } from "@studyflow/engine";
import { call, createTestDatabase, exp, num, str, type TestDatabase } from "@studyflow/testkit";

const NOW_MS = Date.UTC(2031, 4, 1);
const STATUSES = ["active", "exited", "temporary", "accountDeleted", "paused"];
/** 1,500 participants, 900 eligible (temporary and accountDeleted are not), a third of them per status. */
const COUNT = 1_500;
const ELIGIBLE = 900;

/** Every 7th participant gets the flag; of the eligible ones that is 129 (see `flagged`). */
const flagged = (i: number) => i % 7 === 0;
const FLAGGED_ELIGIBLE = Array.from({ length: COUNT }, (_, i) => i).filter(
  (i) => flagged(i) && !["temporary", "accountDeleted"].includes(STATUSES[i % STATUSES.length] as string),
).length;

const appendOn = (condition: Expression): Expression =>
  call("IFTHEN", exp(condition), exp(call("ADD_NEW_SURVEY", str("followup"), num(0), num(0), str("normal"))));

describe("bulk runs over the prefilter's rows", () => {
  let database: TestDatabase;
  let resultDir: string;
  let studyKey: string;
  let round = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-prefilter-"));
  });
  afterAll(async () => {
    await database.drop();
    await rm(resultDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    studyKey = `s${round++}`;
    await createStudy(database.db, { key: studyKey });
    await addSyntheticParticipants(database.db, { studyKey, count: COUNT, statuses: STATUSES, enteredAt: 1 });
    await database.db.execute(sql`
      update participants set flags = '{"wave":"w1"}'::jsonb
      where study_key = ${studyKey} and substring(participant_id from 2)::int % 7 = 0`);
  });

  async function startTask(rules: Expression[], dryRun = false, chunkSize = 200) {
    const task = await createRunActionsTask(
      database.db,
      { studyKey, rules, dryRun, createdBy: "test" },
      () => Promise.resolve(),
      { clock: systemClock },
    );
    const planned = await planTask(database.db, task.id, { clock: systemClock, chunkSize });
    if (planned.status !== "planned") throw new Error(`not planned: ${planned.status}`);
    return { taskId: task.id, chunks: planned.chunks.map((chunk) => chunk.chunkIndex) };
  }

  /** Runs every chunk; `stopAfter` batches into each, the run stops and starts again, as after a kill. */
  async function runAll(taskId: string, chunks: number[], stopAfter?: number, writesInDatabase = true, batchSize = 10) {
    /** Batches each chunk took (asked before every batch whether to stop). */
    const batchesPerChunk: number[] = [];
    /** Where each committed batch ran. */
    const ranIn: BatchRunner[] = [];
    for (const chunkIndex of chunks) {
      let asked = 0;
      const options = {
        clock: () => NOW_MS,
        batchSize,
        shouldStop: () => asked++ === stopAfter,
        writesInDatabase,
        onBatch: (_: number, batch: { ranIn: BatchRunner }) => void ranIn.push(batch.ranIn),
      };
      let outcome = await processChunk(database.db, taskId, chunkIndex, options);
      if (outcome === "stopped") {
        outcome = await processChunk(database.db, taskId, chunkIndex, {
          ...options,
          shouldStop: () => (asked++, false),
        });
        asked--;
      }
      expect(outcome).toBe("done");
      batchesPerChunk.push(asked);
    }
    expect(await finalizeIfComplete(database.db, taskId, resultDir, () => NOW_MS)).toBe("completed");
    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
    const result = JSON.parse(await readFile(path.join(resultDir, task!.resultFile), "utf8")) as RunActionsResult;
    return { task: task!, result, batchesPerChunk, ranIn };
  }

  async function surveysPerParticipant() {
    return database.db.execute<{ participant_id: string; n: number; version: number }>(sql`
      select participant_id, jsonb_array_length(assigned_surveys)::int as n, version from participants
      where study_key = ${studyKey} order by participant_id`);
  }

  it("counts every eligible participant once and changes exactly the selected ones, across stops", async () => {
    const { taskId, chunks } = await startTask([appendOn(call("hasParticipantFlag", str("wave"), str("w1")))]);
    expect(chunks.length).toBeGreaterThan(3);
    const { task, result } = await runAll(taskId, chunks, 1);
    expect(task).toMatchObject({ status: "completed", targetCount: ELIGIBLE, processedCount: ELIGIBLE });
    expect(result).toMatchObject({
      participantCount: ELIGIBLE,
      participantStateChangedPerRule: [FLAGGED_ELIGIBLE],
      errorCount: 0,
    });
    const chunkRows = await database.db.select().from(taskChunks).where(eq(taskChunks.taskId, taskId));
    expect(chunkRows.reduce((sum, chunk) => sum + chunk.processedCount, 0)).toBe(ELIGIBLE);
    // each flagged eligible participant got the survey once, nobody else was written
    for (const row of await surveysPerParticipant()) {
      const i = Number(row.participant_id.slice(1));
      const eligible = !["temporary", "accountDeleted"].includes(STATUSES[i % STATUSES.length] as string);
      const expected = flagged(i) && eligible ? 1 : 0;
      expect({ id: row.participant_id, surveys: row.n, version: row.version }).toEqual({
        id: row.participant_id,
        surveys: expected,
        version: 1 + expected,
      });
    }
  });

  it("a rule set no participant can act on reads no row and still counts them all", async () => {
    const { taskId, chunks } = await startTask([
      call("IFTHEN", exp(call("checkEventType", str("TIMER"))), exp(call("UPDATE_FLAG", str("x"), str("y")))),
    ]);
    const { task, result, batchesPerChunk } = await runAll(taskId, chunks);
    expect(task.processedCount).toBe(ELIGIBLE);
    expect(result).toMatchObject({ participantCount: ELIGIBLE, participantStateChangedPerRule: [0] });
    // one batch per chunk of ~120 eligible in batches of 10: nothing was read, the range counted at once
    expect(batchesPerChunk).toEqual(chunks.map(() => 1));
    expect((await surveysPerParticipant()).every((row) => row.version === 1)).toBe(true);
  });

  it("a dry run counts the same and writes nothing", async () => {
    const rules = [
      appendOn(call("hasParticipantFlag", str("wave"), str("w1"))),
      appendOn(call("hasStudyStatus", str("paused"))),
    ];
    const { taskId, chunks } = await startTask(rules, true);
    const { task, result } = await runAll(taskId, chunks, 2);
    const pausedEligible = ELIGIBLE / 3;
    expect(task.processedCount).toBe(ELIGIBLE);
    expect(result).toMatchObject({
      participantCount: ELIGIBLE,
      participantStateChangedPerRule: [FLAGGED_ELIGIBLE, pausedEligible],
      dryRun: true,
    });
    expect((await surveysPerParticipant()).every((row) => row.n === 0 && row.version === 1)).toBe(true);
  });

  it("counts the participants a batch passes over from the stored rows, whatever their order", async () => {
    // the flagged ones at the very end of the study: early batches select nothing, the last few everything
    await database.db.execute(sql`update participants set flags = '{}'::jsonb where study_key = ${studyKey}`);
    await database.db.execute(sql`
      update participants set flags = '{"wave":"w1"}'::jsonb
      where study_key = ${studyKey} and participant_id >= 'p000001400'`);
    const { taskId, chunks } = await startTask([appendOn(call("hasParticipantFlag", str("wave"), str("w1")))]);
    const { task, result } = await runAll(taskId, chunks, 1);
    const [late] = await database.db.execute<{ n: number }>(sql`
      select count(*)::int as n from participants
      where study_key = ${studyKey} and participant_id >= 'p000001400' and study_status not in ('temporary', 'accountDeleted')`);
    expect(task.processedCount).toBe(ELIGIBLE);
    expect(result.participantStateChangedPerRule).toEqual([late!.n]);
    const [changed] = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(participants)
      .where(sql`${participants.studyKey} = ${studyKey} and ${participants.version} = 2`);
    expect(changed!.n).toBe(late!.n);
  });

  it("plans no empty chunk after the last participant; the last chunk takes those who arrive later", async () => {
    // 900 eligible in chunks of 300: boundaries after the 300th and the 600th, none after the 900th
    const { taskId, chunks } = await startTask(
      [appendOn(call("hasParticipantFlag", str("wave"), str("w1")))],
      false,
      300,
    );
    expect(chunks).toEqual([0, 1, 2]);
    const planned = await database.db.select().from(taskChunks).where(eq(taskChunks.taskId, taskId));
    expect(planned.find((chunk) => chunk.chunkIndex === 2)?.toKey).toBeNull();
    // ten arrive after planning, after every planned key; flagged, so the rule changes them
    await addSyntheticParticipants(database.db, { studyKey, count: 10, idPrefix: "q", enteredAt: 1 });
    await database.db.execute(sql`
      update participants set flags = '{"wave":"w1"}'::jsonb where study_key = ${studyKey} and participant_id like 'q%'`);
    const { task, result } = await runAll(taskId, chunks);
    expect(task.processedCount).toBe(ELIGIBLE + 10);
    expect(result.participantStateChangedPerRule).toEqual([FLAGGED_ELIGIBLE + 10]);
  });

  it("splits a large study at sampled keys: each participant in one chunk, run once", async () => {
    // 20,000 more, of whom a tenth are flagged; sampled once the table's size is known
    const big = `${studyKey}-big`;
    await createStudy(database.db, { key: big });
    await addSyntheticParticipants(database.db, { studyKey: big, count: 20_000, enteredAt: 1 });
    await database.db.execute(sql`
      update participants set flags = '{"wave":"w1"}'::jsonb
      where study_key = ${big} and substring(participant_id from 2)::int % 10 = 0`);
    await database.db.execute(sql`analyze participants`);
    const sampled = await database.db.transaction((tx) => sampledChunkBoundaries(tx, big, 5_000, 20_000));
    expect(sampled).not.toBeNull();
    expect(sampled!.length).toBeGreaterThan(0);
    expect(sampled!.length).toBeLessThanOrEqual(3);
    // a study that is a sliver of the table is walked instead: sampling would read more of the table
    expect(await database.db.transaction((tx) => sampledChunkBoundaries(tx, studyKey, 300, ELIGIBLE))).toBeNull();

    const task = await createRunActionsTask(
      database.db,
      {
        studyKey: big,
        rules: [appendOn(call("hasParticipantFlag", str("wave"), str("w1")))],
        dryRun: false,
        createdBy: "test",
      },
      () => Promise.resolve(),
      { clock: systemClock },
    );
    const planned = await planTask(database.db, task.id, { clock: systemClock, chunkSize: 5_000 });
    if (planned.status !== "planned") throw new Error(`not planned: ${planned.status}`);
    expect(planned.chunks.length).toBeGreaterThan(1);
    const { task: done, result } = await runAll(
      task.id,
      planned.chunks.map((chunk) => chunk.chunkIndex),
      1,
      true,
      1_000,
    );
    expect(done.processedCount).toBe(20_000);
    expect(result.participantStateChangedPerRule).toEqual([2_000]);
    const [written] = await database.db.execute<{ once: number; other: number }>(sql`
      select count(*) filter (where version = 2)::int as once, count(*) filter (where version not in (1, 2))::int as other
      from participants where study_key = ${big}`);
    expect(written).toEqual({ once: 2_000, other: 0 });
  });

  describe("flag and status rules, run by the database", () => {
    /** The flagged get a flag and lose theirs; the paused leave bulk runs (their account is deleted). */
    const rules = [
      call(
        "IFTHEN",
        exp(call("hasParticipantFlag", str("wave"), str("w1"))),
        exp(call("UPDATE_FLAG", str("reached"), str("yes"))),
        exp(call("REMOVE_FLAG", str("wave"))),
      ),
      call(
        "IFTHEN",
        exp(call("hasStudyStatus", str("paused"))),
        exp(call("UPDATE_STUDY_STATUS", str("accountDeleted"))),
      ),
    ];
    const PAUSED_ELIGIBLE = ELIGIBLE / 3;

    async function rowsByOutcome() {
      return database.db.execute<{ participant_id: string; flags: object; study_status: string; version: number }>(sql`
        select participant_id, flags, study_status, version from participants
        where study_key = ${studyKey} order by participant_id`);
    }

    it("change exactly what the engine would and count every eligible participant once, across stops", async () => {
      const { taskId, chunks } = await startTask(rules);
      const { task, result, ranIn } = await runAll(taskId, chunks, 1);
      expect(ranIn.length).toBeGreaterThan(chunks.length);
      expect(new Set(ranIn)).toEqual(new Set(["database"]));
      // the paused left bulk runs during the run, and were counted all the same
      expect(task).toMatchObject({ status: "completed", targetCount: ELIGIBLE, processedCount: ELIGIBLE });
      expect(result).toMatchObject({
        participantCount: ELIGIBLE,
        participantStateChangedPerRule: [FLAGGED_ELIGIBLE, PAUSED_ELIGIBLE],
        errorCount: 0,
      });
      for (const row of await rowsByOutcome()) {
        const i = Number(row.participant_id.slice(1));
        const status = STATUSES[i % STATUSES.length] as string;
        const eligible = !["temporary", "accountDeleted"].includes(status);
        const reached = eligible && flagged(i);
        const left = status === "paused";
        expect(row).toEqual({
          participant_id: row.participant_id,
          flags: reached ? { reached: "yes" } : flagged(i) ? { wave: "w1" } : {},
          study_status: left ? "accountDeleted" : status,
          version: 1 + (reached || left ? 1 : 0),
        });
      }
    });

    it("with the database path switched off, run in the engine to the same result", async () => {
      const { taskId, chunks } = await startTask(rules);
      const { task, result, ranIn } = await runAll(taskId, chunks, 1, false);
      expect(new Set(ranIn)).toEqual(new Set(["engine"]));
      expect(task.processedCount).toBe(ELIGIBLE);
      expect(result.participantStateChangedPerRule).toEqual([FLAGGED_ELIGIBLE, PAUSED_ELIGIBLE]);
      const rows = await rowsByOutcome();
      expect(rows.filter((row) => "reached" in row.flags)).toHaveLength(FLAGGED_ELIGIBLE);
      expect(rows.filter((row) => row.study_status === "paused")).toHaveLength(0);
    });

    it("a dry run counts the same in the database and writes nothing", async () => {
      const { taskId, chunks } = await startTask(rules, true);
      const { task, result, ranIn } = await runAll(taskId, chunks, 2);
      expect(new Set(ranIn)).toEqual(new Set(["database"]));
      expect(task.processedCount).toBe(ELIGIBLE);
      expect(result).toMatchObject({
        participantStateChangedPerRule: [FLAGGED_ELIGIBLE, PAUSED_ELIGIBLE],
        dryRun: true,
      });
      expect((await rowsByOutcome()).every((row) => row.version === 1)).toBe(true);
    });

    it("a batch whose condition the translation cannot tell runs in the engine, with the same result", async () => {
      // a random draw between 0 and 9 is always above -1, but only evaluation knows it
      const opaque = call("gt", exp(call("generateRandomNumber", num(0), num(9))), num(-1));
      const { taskId, chunks } = await startTask([
        call(
          "IFTHEN",
          exp(call("and", exp(opaque), exp(call("hasParticipantFlag", str("wave"), str("w1"))))),
          exp(call("UPDATE_FLAG", str("reached"), str("yes"))),
        ),
      ]);
      const { task, result, ranIn } = await runAll(taskId, chunks);
      expect(new Set(ranIn)).toEqual(new Set(["engine"]));
      expect(task.processedCount).toBe(ELIGIBLE);
      expect(result.participantStateChangedPerRule).toEqual([FLAGGED_ELIGIBLE]);
      const reached = (await rowsByOutcome()).filter((row) => "reached" in row.flags);
      expect(reached.length).toBe(FLAGGED_ELIGIBLE);
    });

    it("a participant an API request changes during the write keeps both changes", async () => {
      const target = "p000000001";
      const api = await database.sql.reserve();
      try {
        // the request holds the row, changed, while the batch reads the version before it and waits to write
        await api`begin`;
        await api`update participants set flags = flags || '{"api":"yes"}'::jsonb, version = version + 1
          where study_key = ${studyKey} and participant_id = ${target}`;
        const { taskId, chunks } = await startTask([
          call(
            "IFTHEN",
            exp(call("checkEventType", str("CUSTOM"))),
            exp(call("UPDATE_FLAG", str("bulk"), str("done"))),
          ),
        ]);
        const running = runAll(taskId, chunks);
        await waitForLockWait();
        await api`commit`;
        const { task, result, ranIn } = await running;
        expect(new Set(ranIn)).toEqual(new Set(["database"]));
        expect(task.processedCount).toBe(ELIGIBLE);
        expect(result.participantStateChangedPerRule).toEqual([ELIGIBLE]);
        const [row] = await database.db.execute<{ flags: object; version: number }>(sql`
          select flags, version from participants where study_key = ${studyKey} and participant_id = ${target}`);
        // p000000001 is eligible (exited) and not flagged: the request's flag and the run's, one version each
        expect(row).toEqual({ flags: { api: "yes", bulk: "done" }, version: 3 });
      } finally {
        await api`rollback`.catch(() => undefined);
        api.release();
      }
    });

    it("a participant an API request takes out of the rule's condition during the write is left as the request left it", async () => {
      const target = "p000000000"; // flagged and active
      const api = await database.sql.reserve();
      try {
        // the request drops the flag the rule asks for, and holds the row while the batch waits to write it
        await api`begin`;
        await api`update participants set flags = '{"api":"yes"}'::jsonb, version = version + 1
          where study_key = ${studyKey} and participant_id = ${target}`;
        const { taskId, chunks } = await startTask([
          call(
            "IFTHEN",
            exp(call("hasParticipantFlag", str("wave"), str("w1"))),
            exp(call("UPDATE_FLAG", str("reached"), str("yes"))),
          ),
        ]);
        const running = runAll(taskId, chunks);
        await waitForLockWait();
        await api`commit`;
        const { task, result, ranIn } = await running;
        expect(new Set(ranIn)).toEqual(new Set(["database"]));
        expect(task.processedCount).toBe(ELIGIBLE);
        expect(result.participantStateChangedPerRule).toEqual([FLAGGED_ELIGIBLE - 1]);
        const [row] = await database.db.execute<{ flags: object; version: number }>(sql`
          select flags, version from participants where study_key = ${studyKey} and participant_id = ${target}`);
        // the rule saw the request's state, without the flag: it did nothing
        expect(row).toEqual({ flags: { api: "yes" }, version: 2 });
      } finally {
        await api`rollback`.catch(() => undefined);
        api.release();
      }
    });

    /** Until some backend of this database waits for a row lock (the batch's write behind the request). */
    async function waitForLockWait() {
      for (let i = 0; i < 500; i++) {
        const [waiting] = await database.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%with batch_range as materialized%'`;
        if ((waiting?.n ?? 0) > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error("the batch never waited for the request's row lock");
    }
  });
});
