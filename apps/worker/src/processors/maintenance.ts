import type { Processor, Queue } from "bullmq";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { sweepApiKeyRevealCopies } from "@studyflow/domain/access";
import { removeExpiredExportFiles, startDailyExports, type ExportRetention } from "@studyflow/domain/exports";
import { type FileStore } from "@studyflow/domain/files";
import { removeExpiredIdempotencyKeys } from "@studyflow/domain/idempotency";
import { sweepExpiredManagementSessions } from "@studyflow/domain/management-users";
import { sweepExpiredAccountTokens } from "@studyflow/domain/participant-accounts";
import { expireTemporaryParticipants } from "@studyflow/domain/participants";
import { pruneFinishedTasks, type TaskRetentionDefaults } from "@studyflow/domain/tasks";
import { maintenanceJobSchema, queueTask } from "@studyflow/queue";
import { runScheduledEmailsRound } from "../schedules/scheduled-emails";
import { sweepStaleTasks } from "./stale-task-sweeper";

export interface MaintenanceProcessorDeps {
  database: DbHandle;
  /** The tasks queue, whose jobs the stale-task sweep looks up and re-queues. */
  taskQueue: Queue;
  logger: Logger;
  clock: () => number;
  /** Age after which temporary participants are removed. */
  temporaryParticipantRetentionSeconds: number;
  /** The export file store, whose files past retention are removed. */
  files: FileStore;
  /** EXPORT_RETENTION_DAYS, DAILY_EXPORT_RETENTION_DAYS. */
  exportRetention: ExportRetention;
  /** TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS (a study's own setting overrides them). */
  taskRetention: TaskRetentionDefaults;
  /** RESULT_DIR, where run-actions and timer tasks keep their result documents. */
  resultDir: string;
}

/**
 * A retention round stops starting batches after this long and the next round (an hour later)
 * goes on: the maintenance queue runs one job at a time per process, and the stale-task sweep
 * (every minute) should not wait long behind a backlog (the first round after an upgrade, say).
 * `tasks:prune` clears a backlog at once.
 */
export const PRUNE_ROUND_BUDGET_MS = 30_000;

/** Runs the cluster's housekeeping jobs; what each returns is kept on the job for the dashboard. */
export function createMaintenanceProcessor(deps: MaintenanceProcessorDeps): Processor {
  const { clock } = deps;
  return async (job) => {
    const data = maintenanceJobSchema.parse(job.data);
    switch (data.kind) {
      case "sweep-stale-tasks":
        return sweepStaleTasks({
          database: deps.database,
          queue: deps.taskQueue,
          logger: deps.logger,
          clock,
        });
      case "expire-temporary-participants": {
        const cutoff = Math.floor(clock() / 1000) - deps.temporaryParticipantRetentionSeconds;
        const removed = await expireTemporaryParticipants(deps.database.db, cutoff);
        if (removed > 0) deps.logger.info({ removed }, "expired temporary participants removed");
        // Idempotency-Key records past their day go with the same periodic sweep (no job of their own).
        const idempotencyKeysRemoved = await removeExpiredIdempotencyKeys(deps.database.db, clock());
        if (idempotencyKeysRemoved > 0)
          deps.logger.info({ idempotencyKeysRemoved }, "expired idempotency keys removed");
        return { removed, ...(idempotencyKeysRemoved > 0 ? { idempotencyKeysRemoved } : {}) };
      }
      case "start-daily-exports": {
        const started = await startDailyExports(deps.database.db, {
          clock,
          now: clock(),
          queue: (task) => queueTask(deps.taskQueue, task),
        });
        for (const daily of started) {
          if (daily.skipped) deps.logger.warn(daily, "daily export skipped");
          else deps.logger.info({ ...daily, task: daily.task?.id }, "daily export queued");
        }
        return {
          started: started.map((daily) => ({
            studyKey: daily.studyKey,
            surveyKey: daily.surveyKey,
            day: daily.day,
            ...(daily.task ? { taskId: daily.task.id } : { skipped: daily.skipped }),
          })),
        };
      }
      case "prune-finished-tasks": {
        const summary = await pruneFinishedTasks(deps.database.db, {
          now: clock(),
          defaults: deps.taskRetention,
          resultDir: deps.resultDir,
          files: deps.files,
          maxDurationMs: PRUNE_ROUND_BUDGET_MS,
          clock,
        });
        const byStudy = Object.fromEntries(
          summary.studies.map((study) => [
            study.studyKey,
            { tasks: study.tasks, timerTicks: study.timerTicks, files: study.files },
          ]),
        );
        const { tasks, timerTicks, files, finished } = summary;
        // One line per round, the counts per study: removals are routine, not an audit event each.
        if (tasks + timerTicks > 0)
          deps.logger.info({ tasks, timerTicks, files, finished, byStudy }, "finished tasks past retention removed");
        return { tasks, timerTicks, files, finished, byStudy };
      }
      case "fire-scheduled-emails": {
        const round = await runScheduledEmailsRound({ db: deps.database.db, logger: deps.logger, clock });
        return { ...round };
      }
      case "sweep-management-sessions": {
        const sweep = await sweepExpiredManagementSessions(deps.database.db, new Date(clock()));
        if (sweep.removed > 0) deps.logger.info({ ...sweep }, "ended management sessions removed");
        // New API keys' sealed copies past their reveal window go with the same sweep of sealed
        // secrets (MANAGEMENT_SECRETS_KEY) nobody will open any more.
        const copies = await sweepApiKeyRevealCopies(deps.database.db, new Date(clock()));
        if (copies.removed > 0) deps.logger.info({ erased: copies.removed }, "unrevealed API key copies erased");
        return { ...sweep, ...(copies.removed > 0 ? { apiKeyRevealCopiesErased: copies.removed } : {}) };
      }
      case "sweep-expired-account-tokens": {
        const sweep = await sweepExpiredAccountTokens(deps.database.db, new Date(clock()));
        if (sweep.removed > 0) deps.logger.info({ ...sweep }, "expired account tokens removed");
        return { ...sweep };
      }
      case "remove-expired-exports": {
        const removed = await removeExpiredExportFiles(deps.database.db, deps.files, {
          now: clock(),
          ...deps.exportRetention,
        });
        if (removed > 0) deps.logger.info({ removed }, "export files past retention removed");
        return { removed };
      }
    }
  };
}
