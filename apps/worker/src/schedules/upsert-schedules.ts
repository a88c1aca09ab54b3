import type { Queue } from "bullmq";
import { scheduledJobOptions } from "@studyflow/queue";

/** One BullMQ job scheduler: `every` milliseconds, one job with `data`, taken by one worker of the cluster. */
export interface ClusterSchedule<T> {
  id: string;
  every: number;
  data: T;
}

/**
 * Creates or updates the schedules. Every replica does this at start; a scheduler id is unique
 * per queue, so however many replicas start, each schedule exists once.
 */
export async function upsertSchedules<T>(queue: Queue, schedules: readonly ClusterSchedule<T>[]): Promise<void> {
  for (const schedule of schedules) {
    await queue.upsertJobScheduler(
      schedule.id,
      { every: schedule.every },
      { name: schedule.id, data: schedule.data, opts: scheduledJobOptions },
    );
  }
}
