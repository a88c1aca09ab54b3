import type { Processor, Queue } from "bullmq";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { expireTemporaryParticipants } from "@studyflow/domain";
import { maintenanceJobSchema } from "@studyflow/queue";
import { sweepStaleTasks } from "./stale-task-sweeper";

export interface MaintenanceProcessorDeps {
  database: DbHandle;
  /** The run-actions queue, whose jobs the stale-task sweep looks up and re-queues. */
  runActionsQueue: Queue;
  logger: Logger;
  clock?: () => number;
  /** Age after which temporary participants are removed. */
  temporaryParticipantRetentionSeconds: number;
}

/** Runs the cluster's housekeeping jobs; what each returns is kept on the job for the dashboard. */
export function createMaintenanceProcessor(deps: MaintenanceProcessorDeps): Processor {
  const clock = deps.clock ?? Date.now;
  return async (job) => {
    const data = maintenanceJobSchema.parse(job.data);
    switch (data.kind) {
      case "sweep-stale-tasks":
        return sweepStaleTasks({
          database: deps.database,
          queue: deps.runActionsQueue,
          logger: deps.logger,
          clock,
        });
      case "expire-temporary-participants": {
        const cutoff = Math.floor(clock() / 1000) - deps.temporaryParticipantRetentionSeconds;
        const removed = await expireTemporaryParticipants(deps.database.db, cutoff);
        if (removed > 0) deps.logger.info({ removed }, "expired temporary participants removed");
        return { removed };
      }
    }
  };
}
