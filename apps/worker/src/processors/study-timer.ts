import type { Processor, Queue } from "bullmq";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { startDueTimerTicks } from "@studyflow/domain/timer";
import { queueTask, timerJobSchema } from "@studyflow/queue";

export interface StudyTimerProcessorDeps {
  database: DbHandle;
  /** Where a tick's task job goes: ticks run on the bulk pipeline like any task. */
  taskQueue: Queue;
  logger: Logger;
  clock: () => number;
  /** TIMER_INTERVAL_SECONDS: the interval of studies without their own. */
  defaultIntervalSeconds: number;
  /** Told of every tick recorded (metrics). */
  onTick?: (outcome: "queued" | "skipped") => void;
}

/**
 * Runs the timer's scans: each one records the ticks that have fallen due and queues their task
 * jobs. What it returns is kept on the job, so the dashboard shows which study ticked and which
 * tick was skipped.
 */
export function createStudyTimerProcessor(deps: StudyTimerProcessorDeps): Processor {
  const { clock } = deps;
  return async (job) => {
    timerJobSchema.parse(job.data);
    const started = await startDueTimerTicks(deps.database.db, {
      now: clock(),
      defaultIntervalSeconds: deps.defaultIntervalSeconds,
      enqueue: (taskId) => queueTask(deps.taskQueue, { id: taskId, kind: "timer" }),
    });
    for (const tick of started) {
      deps.onTick?.(tick.status);
      const details = { studyKey: tick.studyKey, taskId: tick.task.id, dueAt: tick.dueAt.toISOString() };
      if (tick.enqueueError) {
        deps.logger.warn(
          { ...details, err: tick.enqueueError },
          "timer tick recorded but not queued; the stale-task sweeper queues it again",
        );
      } else if (tick.status === "skipped") {
        deps.logger.info({ ...details, reason: tick.task.error }, "timer tick skipped");
      } else {
        deps.logger.info(details, "timer tick queued");
      }
    }
    return {
      ticks: started.map((tick) => ({
        studyKey: tick.studyKey,
        dueAt: tick.dueAt.toISOString(),
        taskId: tick.task.id,
        status: tick.status,
      })),
    };
  };
}
