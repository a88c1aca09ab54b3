import type { Processor, Queue } from "bullmq";
import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import { type DomainContext, type RuleFailureRecord } from "@studyflow/domain/events";
import {
  markAccountDeletionFailed,
  runAccountDeletion,
  unfinishedAccountDeletions,
} from "@studyflow/domain/participant-accounts";
import { type ExternalServiceCaller } from "@studyflow/domain/rules";
import { accountDeletionJobId, accountDeletionJobSchema, queueAccountDeletion } from "@studyflow/queue";

/**
 * A deletion requested this long ago without a live job is queued again. The API queues the job
 * right after its commit, so a minute only passes when that enqueue was lost (or every retry of
 * the job failed, and the row says why).
 */
export const DELETION_LOST_AFTER_MS = 60_000;
/** Rows looked at per sweep: deletions are rare; a backlog is worked off over a few sweeps. */
const SWEEP_BATCH = 100;
/** Two sweeps never overlap: the second skips its turn. */
export const SWEEP_LOCK_ID = 7_420_031_025;

const LIVE_STATES = new Set(["active", "waiting", "delayed", "prioritized", "waiting-children"]);

export interface AccountDeletionProcessorDeps {
  database: DbHandle;
  /** The account-deletion queue, whose lost jobs the sweep queues again (made after the processor). */
  queue: () => Queue;
  logger: Logger;
  clock: () => number;
  callExternalService?: ExternalServiceCaller;
  onRuleFailures?: (failures: readonly RuleFailureRecord[]) => void;
}

/**
 * Runs account deletions (one job per account_deletions row, resuming from the row's progress)
 * and the sweep that queues again the deletions whose job was lost. A failed run is recorded on
 * the row (status failed, its error) before BullMQ retries it, so operators see it at once.
 */
export function createAccountDeletionProcessor(deps: AccountDeletionProcessorDeps): Processor {
  const { clock } = deps;
  const ctx: DomainContext = {
    clock,
    ...(deps.callExternalService ? { callExternalService: deps.callExternalService } : {}),
    ...(deps.onRuleFailures ? { onRuleFailures: deps.onRuleFailures } : {}),
  };
  return async (job) => {
    const data = accountDeletionJobSchema.parse(job.data);
    if (data.kind === "sweep-account-deletions") {
      return sweepAccountDeletions({ database: deps.database, queue: deps.queue(), logger: deps.logger, clock });
    }
    try {
      const outcome = await runAccountDeletion(deps.database.db, data.deletionId, ctx, {
        onParticipantDone: (done, total) => job.updateProgress({ done, total }),
      });
      deps.logger.info({ deletionId: data.deletionId, ...outcome }, "account deletion finished");
      return outcome;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await markAccountDeletionFailed(deps.database.db, data.deletionId, message).catch((failure: unknown) =>
        deps.logger.error({ err: failure, deletionId: data.deletionId }, "could not record a failed account deletion"),
      );
      deps.logger.warn({ err: error, deletionId: data.deletionId }, "account deletion failed; it is retried");
      throw error;
    }
  };
}

/**
 * Queues every unfinished deletion older than {@link DELETION_LOST_AFTER_MS} that has no live
 * job: a pending row whose enqueue was lost, a running one whose worker died and whose job is
 * gone, a failed one whose retries are used up (retried again, once per sweep).
 */
export async function sweepAccountDeletions(deps: {
  database: DbHandle;
  queue: Queue;
  logger: Logger;
  clock: () => number;
  lostAfterMs?: number;
}): Promise<{ requeued: string[] }> {
  const { clock } = deps;
  const requeued: string[] = [];
  await deps.database.db.transaction(async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${SWEEP_LOCK_ID}) as locked`,
    );
    if (!lock?.locked) return;
    const rows = await unfinishedAccountDeletions(tx, {
      before: new Date(clock() - (deps.lostAfterMs ?? DELETION_LOST_AFTER_MS)),
      limit: SWEEP_BATCH,
    });
    for (const row of rows) {
      const state = (await (await deps.queue.getJob(accountDeletionJobId(row.id)))?.getState()) ?? "missing";
      if (LIVE_STATES.has(state)) continue;
      await queueAccountDeletion(deps.queue, row.id);
      requeued.push(row.id);
    }
  });
  if (requeued.length > 0) deps.logger.warn({ requeued }, "account deletions queued again");
  return { requeued };
}
