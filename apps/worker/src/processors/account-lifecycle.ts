import type { Processor, Queue } from "bullmq";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import {
  lifecycleStepEnabled,
  runAccountLifecycleStep,
  type AccountLifecycleRound,
  type AccountLifecycleSettings,
  type AccountLifecycleStep,
} from "@studyflow/domain/participant-accounts";
import { accountLifecycleJobSchema, queueAccountDeletion, type AccountLifecycleJob } from "@studyflow/queue";

export interface AccountLifecycleProcessorDeps {
  database: DbHandle;
  settings: AccountLifecycleSettings;
  /** The account-deletion queue, where the deletions a round requests are queued. */
  deletionQueue: () => Queue;
  logger: Logger;
  clock: () => number;
}

const STEPS: Record<AccountLifecycleJob["kind"], readonly AccountLifecycleStep[]> = {
  "remove-unverified-accounts": ["remove-unverified"],
  "remind-unverified-accounts": ["remind-unverified"],
  // Deletions first: an account notified in this round is never deleted in it.
  "handle-inactive-accounts": ["delete-inactive", "notify-inactive"],
};

/**
 * Runs the account lifecycle rounds. A deletion a round requests is committed first and its task
 * queued after; an enqueue that fails is found by the account-deletion sweep, as the API's are.
 * A round of a step this process has switched off (another replica's stale scheduler) does nothing.
 */
export function createAccountLifecycleProcessor(deps: AccountLifecycleProcessorDeps): Processor {
  const { clock } = deps;
  return async (job) => {
    const data = accountLifecycleJobSchema.parse(job.data);
    const rounds: AccountLifecycleRound[] = [];
    for (const step of STEPS[data.kind]) {
      if (!lifecycleStepEnabled(deps.settings, step)) continue;
      const round = await runAccountLifecycleStep(deps.database.db, deps.settings, step, { now: new Date(clock()) });
      for (const deletionId of round.deletionIds) {
        try {
          await queueAccountDeletion(deps.deletionQueue(), deletionId);
        } catch (error) {
          deps.logger.warn({ err: error, deletionId }, "account deletion not queued; the deletion sweep queues it");
        }
      }
      if (round.handled > 0) deps.logger.info({ step, handled: round.handled }, "account lifecycle round");
      rounds.push(round);
    }
    return Object.fromEntries(rounds.map((round) => [round.step, { handled: round.handled, batches: round.batches }]));
  };
}
