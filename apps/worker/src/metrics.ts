import type { JobState, Queue } from "bullmq";
import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { TASK_STATUSES, tasks, type DbHandle } from "@studyflow/db";

/** The job states a scrape reports; "completed" and "failed" are bounded by the queue's removeOn* options. */
export const QUEUE_STATES = [
  "waiting",
  "active",
  "delayed",
  "failed",
  "completed",
  "prioritized",
  "waiting-children",
] as const satisfies readonly JobState[];

/** Every status gets a series, at 0 when no task has it, so alerts on e.g. `failed` see the series. */
// (`skipped` counts timer ticks that never ran because another bulk task of their study was ahead.)

export interface WorkerMetrics {
  /** One registry per runtime, so several runtimes in one process (tests) never share a series. */
  registry: Registry;
  participantsProcessed: Counter;
  ruleFailures: Counter<"event_type" | "outcome">;
  /** Timer ticks this process recorded or skipped: `queued` (it runs), `skipped` (another task of the study was ahead). */
  timerTicks: Counter<"outcome">;
  /** Committed bulk batches by where their rules ran: `database` (one SQL statement) or `engine`. */
  bulkBatches: Counter<"ran_in">;
}

export interface WorkerMetricsDeps {
  database: DbHandle;
  /** Queues whose job counts are read at scrape time. */
  queues: Queue[];
  logger: Logger;
}

export function createWorkerMetrics(deps: WorkerMetricsDeps): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const participantsProcessed = new Counter({
    name: "studyflow_participants_processed_total",
    help: "Participants run through a bulk rule set by this process, counted per committed batch.",
    registers: [registry],
  });

  // Gauges below are read at scrape time. A failing read drops the gauge's series for that scrape
  // instead of failing the whole scrape, so process metrics still arrive while Redis or Postgres is down.
  new Gauge({
    name: "studyflow_queue_jobs",
    help: "Jobs in a BullMQ queue by state, read at scrape time (shared by every worker on the queue).",
    labelNames: ["queue", "state"],
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        deps.queues.map(async (queue) => {
          try {
            const counts = await queue.getJobCounts(...QUEUE_STATES);
            for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          } catch (error) {
            deps.logger.warn({ err: error, queue: queue.name }, "metrics: could not read queue job counts");
          }
        }),
      );
    },
  });

  new Gauge({
    name: "studyflow_tasks",
    help: "Tasks by status, read from the database at scrape time (all studies, all processes).",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const rows = await deps.database.db
          .select({ status: tasks.status, count: sql<number>`count(*)::int` })
          .from(tasks)
          .groupBy(tasks.status);
        for (const status of TASK_STATUSES) this.set({ status }, 0);
        for (const row of rows) this.set({ status: row.status }, row.count);
      } catch (error) {
        deps.logger.warn({ err: error }, "metrics: could not count tasks by status");
      }
    },
  });

  const ruleFailures = new Counter({
    name: "studyflow_rule_failures_total",
    help: "Rule failures recorded by this process's bulk runs (a sample per batch), by event type and outcome.",
    labelNames: ["event_type", "outcome"],
    registers: [registry],
  });
  const timerTicks = new Counter({
    name: "studyflow_timer_ticks_total",
    help: "Study timer ticks handled by this process, by outcome: queued (it runs) or skipped (another bulk task of the study was ahead).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  // Both series exist from the start, so a rate() or an alert on skipped ticks sees 0, not nothing.
  for (const outcome of ["queued", "skipped"]) timerTicks.inc({ outcome }, 0);
  const bulkBatches = new Counter({
    name: "studyflow_bulk_batches_total",
    help: "Bulk batches this process committed, by where their rules ran: database (flag, status and survey rules as one SQL statement) or engine.",
    labelNames: ["ran_in"],
    registers: [registry],
  });
  for (const ranIn of ["database", "engine"]) bulkBatches.inc({ ran_in: ranIn }, 0);
  return { registry, participantsProcessed, ruleFailures, timerTicks, bulkBatches };
}
