import type { Queue } from "bullmq";
import { z } from "zod";

/**
 * Account deletions: one job per account_deletions row, and a cluster schedule that finds rows
 * whose job was lost (the API died between its commit and the enqueue, or every retry failed).
 * A queue of its own, so a long bulk task never holds up a participant's deletion.
 */
export const ACCOUNT_DELETION_QUEUE = "account-deletion";

export const accountDeletionJobSchema = z.discriminatedUnion("kind", [
  /** Works through one deletion, resuming from the progress its row records. */
  z.object({ kind: z.literal("delete-account"), deletionId: z.uuid() }),
  /** Queues the deletion of every unfinished row that has no live job. */
  z.object({ kind: z.literal("sweep-account-deletions") }),
]);
export type AccountDeletionJob = z.infer<typeof accountDeletionJobSchema>;

/** jobId = deletion id: a second enqueue of the same deletion is a no-op in BullMQ. */
export const accountDeletionJobId = (deletionId: string) => `account-deletion-${deletionId}`;

export const accountDeletionJobOptions = {
  // A failing step is a database hiccup or a rule that throws; five attempts with backoff ride
  // out a restart of about a minute. After that the row says "failed" and the sweeper tries again.
  attempts: 5,
  backoff: { type: "exponential", delay: 2_000 },
  // The account_deletions row is the record of truth; a finished job is only needed to look at.
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600 },
} as const;

/**
 * Queues a recorded deletion's job; the API, the CLI and the sweeper all go through here. A job
 * of the same deletion that is waiting or running makes this a no-op; one that finished (failed
 * after its retries, or completed while the row still says otherwise) is replaced, since BullMQ
 * would otherwise ignore the new job for the old one's id.
 */
export async function queueAccountDeletion(queue: Queue, deletionId: string): Promise<void> {
  const jobId = accountDeletionJobId(deletionId);
  const previous = await queue.getJob(jobId);
  if (previous) {
    const state = await previous.getState();
    if (state === "failed" || state === "completed") await previous.remove();
  }
  const job: AccountDeletionJob = { kind: "delete-account", deletionId };
  await queue.add("delete-account", job, { ...accountDeletionJobOptions, jobId });
}
