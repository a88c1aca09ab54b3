import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { tasks } from "@studyflow/db";
import { type RunActionsResult } from "@studyflow/domain/bulk";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { createRunActionsTask, type TaskRow } from "@studyflow/domain/tasks";
import type { Expression } from "@studyflow/engine";
import { TASKS_QUEUE, createRedisConnection, taskJobOptions, taskJobId, type TaskJob } from "@studyflow/queue";
import {
  createTestDatabase,
  deletePrefix,
  onEvent,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import { startWorkerRuntime, type WorkerRuntime, type WorkerRuntimeDeps } from "../src/runtime";

export { call, exp, num, str } from "@studyflow/testkit";
export const onCustom = (...actions: Expression[]): Expression => onEvent("CUSTOM", ...actions);

export interface WorkerHarness {
  database: TestDatabase;
  prefix: string;
  resultDir: string;
  queue: Queue;
  runtimes: WorkerRuntime[];
  /** Starts an in-process worker; `redisName` names its Redis connections (to find and cut them). */
  start: (overrides?: Partial<WorkerRuntimeDeps> & { redisName?: string }) => WorkerRuntime;
  createTask: (studyKey: string, rules: Expression[], dryRun?: boolean) => Promise<string>;
  task: (taskId: string) => Promise<TaskRow>;
  /** A bare task row with no job behind it (rules empty), for tests that feed the queue themselves. */
  insertTaskRow: (studyKey: string, values?: Partial<typeof tasks.$inferInsert>) => Promise<TaskRow>;
  waitForTask: (taskId: string, statuses: string[], timeoutMs?: number) => Promise<TaskRow>;
  close: () => Promise<void>;
}

const silent = pino({ level: "silent" });

export async function createWorkerHarness(): Promise<WorkerHarness> {
  const database = await createTestDatabase();
  const prefix = uniqueQueuePrefix();
  const resultDir = await mkdtemp(path.join(tmpdir(), "sf-worker-results-"));
  const producer = createRedisConnection(testRedisUrl, "producer");
  const queue = new Queue(TASKS_QUEUE, { connection: producer, prefix });
  const runtimes: WorkerRuntime[] = [];
  const connections: { disconnect: () => void }[] = [producer];

  const harness: WorkerHarness = {
    database,
    prefix,
    resultDir,
    queue,
    runtimes,
    start: ({ redisName, ...overrides } = {}) => {
      const named = redisName ? { connectionName: redisName } : {};
      const connection = createRedisConnection(testRedisUrl, "worker", named);
      const producerConnection = createRedisConnection(testRedisUrl, "producer", named);
      connections.push(connection, producerConnection);
      const runtime = startWorkerRuntime({
        clock: systemClock,
        database,
        connection,
        producerConnection,
        prefix,
        concurrency: 2,
        resultDir,
        logger: silent,
        maintenance: false,
        ...overrides,
      });
      runtimes.push(runtime);
      return runtime;
    },
    createTask: async (studyKey, rules, dryRun = false) => {
      const task = await createRunActionsTask(
        database.db,
        { studyKey, rules, dryRun, createdBy: "tester" },
        async (taskId) => {
          const job: TaskJob = { kind: "task", taskId };
          await queue.add(TASKS_QUEUE, job, { ...taskJobOptions, jobId: taskJobId(taskId) });
        },
        { clock: systemClock },
      );
      return task.id;
    },
    task: async (taskId) => {
      const [row] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
      if (!row) throw new Error(`task ${taskId} not found`);
      return row;
    },
    insertTaskRow: async (studyKey, values = {}) => {
      const [row] = await database.db
        .insert(tasks)
        .values({ studyKey, kind: "run-actions", input: { rules: [], dryRun: false }, createdBy: "x", ...values })
        .returning();
      if (!row) throw new Error("task insert returned nothing");
      return row;
    },
    waitForTask: async (taskId, statuses, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const row = await harness.task(taskId);
        if (statuses.includes(row.status)) return row;
        if (Date.now() > deadline) {
          throw new Error(
            `task ${taskId} is ${row.status} (${row.processedCount}/${row.targetCount}), not ${statuses.join("|")}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: async () => {
      await Promise.all(runtimes.map((runtime) => runtime.close(5_000)));
      await queue.close();
      await deletePrefix(producer, prefix);
      for (const connection of connections) connection.disconnect();
      await database.drop();
    },
  };
  return harness;
}

/** A finished task's result document. */
export async function readResult(h: WorkerHarness, resultFile: string): Promise<RunActionsResult> {
  return JSON.parse(await readFile(path.join(h.resultDir, resultFile), "utf8")) as RunActionsResult;
}

export async function studyWithRules(harness: WorkerHarness, key: string, rules?: Expression[]) {
  const study = await createStudy(harness.database.db, { key });
  if (rules) await setStudyRules(harness.database.db, key, rules, "test");
  return study;
}

/**
 * An in-process worker on the same database and queue prefix as a test API (`createTestApp`),
 * for tests that go through both. `stop` closes it and its Redis connections.
 */
export function startWorkerBesideApi(
  api: { database: TestDatabase; config: { QUEUE_PREFIX: string } },
  resultDir: string,
  overrides: Partial<WorkerRuntimeDeps> = {},
): { runtime: WorkerRuntime; stop: () => Promise<void> } {
  const connection = createRedisConnection(testRedisUrl, "worker");
  const producerConnection = createRedisConnection(testRedisUrl, "producer");
  const runtime = startWorkerRuntime({
    clock: systemClock,
    database: api.database,
    connection,
    producerConnection,
    prefix: api.config.QUEUE_PREFIX,
    concurrency: 2,
    resultDir,
    logger: silent,
    maintenance: false,
    ...overrides,
  });
  return {
    runtime,
    stop: async () => {
      await runtime.close(5_000);
      connection.disconnect();
      producerConnection.disconnect();
    },
  };
}
