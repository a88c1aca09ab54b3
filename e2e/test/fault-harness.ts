// Helpers of the fault tests (database-faults.test.ts, redis-faults.test.ts): child processes
// of the apps, and the cuts: PostgreSQL backends terminated and Redis clients killed by the name
// the process gave them, so a test never touches another test's (or another run's) connections.
import { spawn, type ChildProcess } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { and, eq, sql } from "drizzle-orm";
import type { Redis } from "ioredis";
import type postgres from "postgres";
import { participants, reports, taskChunks, tasks, type Database } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { createRunActionsTask, type TaskRow } from "@studyflow/domain/tasks";
import { updateStudyTimer } from "@studyflow/domain/timer";
import type { Expression } from "@studyflow/engine";
import { TASKS_QUEUE, TIMER_QUEUE, createRedisConnection, taskJobOptions, taskJobId } from "@studyflow/queue";
import { testRedisUrl, waitForHttpOk } from "@studyflow/testkit";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ChildApp {
  child: ChildProcess;
  /** Everything it wrote so far (stdout and stderr, interleaved), the last 8 MiB. */
  output: () => string;
  /** Its stdout alone (whole lines: e.g. the API entry's JSON log), the last 8 MiB. */
  stdout: () => string;
  /** Its stderr alone (the fault scripts' JSON log), the last 8 MiB. */
  stderr: () => string;
  /** Resolves when it has ended, however. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True while the process runs. */
  alive: () => boolean;
  /** Resolves once a line of its stdout matches; fails if it ends first or after `timeoutMs`. */
  waitForLine: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL if it has not ended within `timeoutMs`; resolves with how it ended. */
  stop: (timeoutMs?: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const OUTPUT_LIMIT = 8 * 1024 * 1024;

/** Starts `node --import tsx <file>` from the repository root with `env` added to this environment. */
export function startChild(file: string, env: Record<string, string>): ChildApp {
  const child = spawn(process.execPath, ["--import", "tsx", file], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let stdout = "";
  let stderr = "";
  let stdoutLines: string[] = [];
  let pending = "";
  const watchers = new Set<() => void>();
  const bounded = (text: string) => (text.length > OUTPUT_LIMIT ? text.slice(-OUTPUT_LIMIT) : text);
  child.stdout.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    output = bounded(output + text);
    stdout = bounded(stdout + text);
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    stdoutLines = [...stdoutLines, ...lines].slice(-1_000);
    for (const watcher of watchers) watcher();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    output = bounded(output + text);
    stderr = bounded(stderr + text);
  });
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      ended = { code, signal };
      for (const watcher of watchers) watcher();
      resolve(ended);
    });
  });
  const app: ChildApp = {
    child,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    alive: () => ended === undefined,
    waitForLine: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          for (const line of stdoutLines) {
            const match = pattern.exec(line);
            if (match) return done(() => resolve(match));
          }
          const finished = ended;
          if (finished) {
            return done(() => reject(new Error(`${file} ended (${describe(finished)}) before ${pattern}:\n${output}`)));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`${file}: no line ${pattern} within ${timeoutMs} ms:\n${output}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          watchers.delete(check);
          settle();
        };
        watchers.add(check);
        check();
      }),
    stop: async (timeoutMs = 10_000) => {
      if (!ended) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
  return app;
}

export { freePort } from "@studyflow/testkit";

const describe = (ended: { code: number | null; signal: NodeJS.Signals | null }) =>
  ended.signal ?? `code ${ended.code}`;

/** Polls `url` until it answers 200; fails at once if the process ends first. */
export function waitForOk(url: string, app: ChildApp, timeoutMs = 30_000): Promise<void> {
  return waitForHttpOk(url, {
    gone: async () => (app.alive() ? undefined : `the process ended (${describe(await app.exited)}):\n${app.output()}`),
    output: app.output,
    timeoutMs,
  });
}

/**
 * Terminates every backend of database `datname` whose application_name is `applicationName`
 * (as a restart or failover would cut them); returns how many were terminated.
 */
export async function terminateBackends(admin: postgres.Sql, datname: string, applicationName: string) {
  const rows = await admin<{ terminated: boolean }[]>`
    select pg_terminate_backend(pid) as terminated from pg_stat_activity
    where datname = ${datname} and application_name = ${applicationName} and pid <> pg_backend_pid()`;
  return rows.filter((row) => row.terminated).length;
}

/** The ids of the Redis connections named `name` (CLIENT SETNAME). */
export async function redisClientIds(admin: Redis, name: string): Promise<string[]> {
  const clients = (await admin.client("LIST")) as string;
  return clients
    .split("\n")
    .filter((line) => line.split(" ").includes(`name=${name}`))
    .map((line) => /(?:^| )id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
}

/** Closes, from the server side, every Redis connection named `name`; returns how many. */
export async function killRedisClients(admin: Redis, name: string): Promise<number> {
  let killed = 0;
  for (const id of await redisClientIds(admin, name)) killed += Number(await admin.client("KILL", "ID", id));
  return killed;
}

/** Waits until at least `count` connections named `name` are connected (ioredis reconnects with a backoff). */
export async function waitForRedisClients(admin: Redis, name: string, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await redisClientIds(admin, name)).length < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} Redis connections named ${name}`);
    await sleep(20);
  }
}

/** A BullMQ producer on `prefix`, as the API enqueues run-actions tasks. */
export function runActionsProducer(prefix: string) {
  const connection = createRedisConnection(testRedisUrl, "producer");
  const queue = new Queue(TASKS_QUEUE, { connection, prefix });
  return {
    queue,
    createTask: async (db: Database, studyKey: string, rules: Expression[]) =>
      createRunActionsTask(
        db,
        { studyKey, rules, dryRun: false, createdBy: "fault-test" },
        async (taskId) => {
          await queue.add(TASKS_QUEUE, { kind: "task", taskId }, { ...taskJobOptions, jobId: taskJobId(taskId) });
        },
        { clock: systemClock },
      ),
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}

export async function taskRow(db: Database, taskId: string): Promise<TaskRow> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  if (!row) throw new Error(`task ${taskId} not found`);
  return row;
}

/** The last `bytes` of a process's output, from its last whole line. */
function outputTail(output: string, bytes: number): string {
  if (output.length <= bytes) return output;
  const tail = output.slice(-bytes);
  return tail.slice(tail.indexOf("\n") + 1);
}

/**
 * Polls the task until it has one of `statuses`; `onPoll` runs on every look (e.g. to cut
 * connections). On a timeout the error says where the task stands: each chunk's status, count and
 * cursor, and the last lines of `worker`'s output when given.
 */
export async function waitForTask(
  db: Database,
  taskId: string,
  statuses: string[],
  timeoutMs: number,
  onPoll?: (row: TaskRow) => Promise<void>,
  worker?: ChildApp,
): Promise<TaskRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await taskRow(db, taskId);
    if (statuses.includes(row.status)) return row;
    if (Date.now() > deadline) {
      const chunks = await db
        .select({
          index: taskChunks.chunkIndex,
          status: taskChunks.status,
          processed: taskChunks.processedCount,
          cursor: taskChunks.cursor,
          updatedAt: taskChunks.updatedAt,
        })
        .from(taskChunks)
        .where(eq(taskChunks.taskId, taskId))
        .orderBy(taskChunks.chunkIndex);
      const open = chunks.filter((chunk) => chunk.status !== "done");
      throw new Error(
        `task ${taskId} is ${row.status} (${row.processedCount}/${row.targetCount}) after ${timeoutMs} ms; ` +
          `${chunks.length - open.length} of ${chunks.length} chunks done, the others: ${JSON.stringify(open)}` +
          (worker ? `\nthe worker's last output:\n${outputTail(worker.output(), 6_000)}` : ""),
      );
    }
    await onPoll?.(row);
    await sleep(25);
  }
}

/** The task's chunks, in order: status and processed count. */
export async function chunksOf(db: Database, taskId: string) {
  return db
    .select({ status: taskChunks.status, processedCount: taskChunks.processedCount })
    .from(taskChunks)
    .where(eq(taskChunks.taskId, taskId))
    .orderBy(taskChunks.chunkIndex);
}

/**
 * How often a study's participants got the task's work: the smallest and largest number of
 * assigned surveys, and of reports with key `reportKey`, over its participants.
 */
export async function appliedPerParticipant(db: Database, studyKey: string, reportKey: string) {
  const [surveys] = await db
    .select({
      participants: sql<number>`count(*)::int`,
      min: sql<number>`min(jsonb_array_length(${participants.assignedSurveys}))::int`,
      max: sql<number>`max(jsonb_array_length(${participants.assignedSurveys}))::int`,
    })
    .from(participants)
    .where(eq(participants.studyKey, studyKey));
  const [reportCounts] = await db.execute<{ min: number; max: number; participants: number }>(sql`
    select count(*)::int as participants, min(n)::int as min, max(n)::int as max from (
      select p.participant_id, count(r.id) as n from ${participants} p
      left join ${reports} r on r.study_key = p.study_key and r.participant_id = p.participant_id and r.key = ${reportKey}
      where p.study_key = ${studyKey} group by p.participant_id) per_participant`);
  return { surveys, reports: reportCounts };
}

/** Every file below `dir`, relative to it. */
export async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The distinct error-level lines of a process's JSON log (pino), as `msg: error message`. */
export function loggedErrors(output: string): string[] {
  const found = new Set<string>();
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string; code?: string } };
      if ((entry.level ?? 0) < 50) continue;
      const message = (entry.err?.message ?? "").replace(/\s+/g, " ").slice(0, 160);
      found.add(`${entry.msg ?? ""}: ${message}${entry.err?.code ? ` (${entry.err.code})` : ""}`);
    } catch {
      // not a log line
    }
  }
  return [...found];
}

/**
 * Gives the study a timer whose current slot began `agoSeconds` ago and whose next one is
 * `intervalSeconds` away (a week by default): one tick is due now, and no second one while a test runs.
 */
export async function timerDueNow(db: Database, studyKey: string, agoSeconds = 5, intervalSeconds = 7 * 86_400) {
  const nowS = Math.floor(Date.now() / 1000);
  const offsetSeconds = (((nowS - agoSeconds) % intervalSeconds) + intervalSeconds) % intervalSeconds;
  await updateStudyTimer(db, studyKey, { intervalSeconds, offsetSeconds }, "fault-test", { now: Date.now() });
}

/** The study's timer ticks (tasks of kind "timer"), oldest first. */
export async function timerTicksOf(db: Database, studyKey: string): Promise<TaskRow[]> {
  return db
    .select()
    .from(tasks)
    .where(and(eq(tasks.studyKey, studyKey), eq(tasks.kind, "timer")))
    .orderBy(tasks.createdAt);
}

/** Polls until the study has a tick satisfying `ready`; fails after `timeoutMs` with what there is. */
export async function waitForTick(
  db: Database,
  studyKey: string,
  ready: (tick: TaskRow) => boolean,
  timeoutMs: number,
): Promise<TaskRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await timerTicksOf(db, studyKey)).find(ready);
    if (found) return found;
    if (Date.now() > deadline) {
      const ticks = (await timerTicksOf(db, studyKey)).map((t) => `${t.status} ${t.processedCount}/${t.targetCount}`);
      throw new Error(`no such tick of ${studyKey} within ${timeoutMs} ms; ticks: ${JSON.stringify(ticks)}`);
    }
    await sleep(25);
  }
}

/** The scans the timer ran on `prefix` (completed jobs of its queue), each with the ticks it recorded. */
export async function timerScans(prefix: string): Promise<{ ticks: { studyKey: string; status: string }[] }[]> {
  const connection = createRedisConnection(testRedisUrl, "producer");
  const queue = new Queue(TIMER_QUEUE, { connection, prefix });
  try {
    const jobs = await queue.getJobs(["completed"]);
    return jobs.map((job) => job.returnvalue as { ticks: { studyKey: string; status: string }[] });
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
