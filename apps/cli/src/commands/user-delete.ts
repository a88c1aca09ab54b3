import { setTimeout as sleep } from "node:timers/promises";
import { Option } from "commander";
import { z } from "zod";
import {
  accountDeletionProgress,
  getParticipantAccount,
  requestAccountDeletion,
} from "@studyflow/domain/participant-accounts";
import { ACCOUNT_DELETION_QUEUE, createRedisConnection, queueAccountDeletion } from "@studyflow/queue";
import { Queue } from "bullmq";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { text } from "../flag-values";
import { createProgressReporter, progressModeFor, type ProgressStream } from "../progress";
import { POLL_INTERVAL_MS } from "./export-task";

/** What tests put into the context: where progress goes, and a faster poll. */
export interface DeletionFollowHooks {
  progress: ProgressStream;
  pollIntervalMs: number;
}
export type UserDeleteContext = CliContext & Partial<DeletionFollowHooks>;

export interface UserDeleteInput {
  userId: string;
  wait: boolean;
}

/** A deletion's statuses in the words the progress display uses for tasks. */
const TASK_STATUS = { pending: "queued", running: "in_progress", done: "completed", failed: "failed" } as const;

async function enqueue(ctx: CliContext, deletionId: string): Promise<void> {
  const connection = createRedisConnection(ctx.config.REDIS_URL, "producer");
  const queue = new Queue(ACCOUNT_DELETION_QUEUE, { connection, prefix: ctx.config.QUEUE_PREFIX });
  try {
    await queueAccountDeletion(queue, deletionId);
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

/**
 * Deletes a participant account as DELETE /v1/participant-users/{id} does: signed out at once,
 * then the workers' deletion task (LEAVE rules for every participant, the account removed). Follows
 * it with a progress bar until it is done, unless --no-wait. A failed run is retried by the
 * workers; the command stops following and says so.
 */
export async function userDelete(ctx: UserDeleteContext, input: UserDeleteInput) {
  const db = ctx.database.db;
  await getParticipantAccount(db, input.userId);
  const { deletion } = await requestAccountDeletion(db, {
    userId: input.userId,
    now: new Date(ctx.clock()),
    operator: UPLOADED_BY,
  });
  await enqueue(ctx, deletion.id);
  if (!input.wait) {
    const data = { deletion: { id: deletion.id, userId: deletion.userId, status: deletion.status } };
    ctx.output.result(data, [`account deletion ${deletion.id} queued; the account is signed out everywhere`]);
    return data;
  }
  const stream = ctx.progress ?? process.stderr;
  const reporter = createProgressReporter({
    mode: progressModeFor(stream, ctx.output.json),
    stream,
    label: `delete ${input.userId.slice(0, 8)}`,
    unit: "participants",
    clock: ctx.clock,
  });
  try {
    for (;;) {
      const progress = await accountDeletionProgress(db, deletion.id);
      const status = progress.deletion.status as keyof typeof TASK_STATUS;
      reporter.update({
        status: TASK_STATUS[status] ?? status,
        processedCount: progress.done,
        targetCount: progress.total,
      });
      if (status === "done") {
        reporter.stop();
        const data = { deletion: { id: deletion.id, userId: deletion.userId, status, participants: progress.done } };
        ctx.output.result(data, [`account ${input.userId} deleted (${progress.done} participants taken out)`]);
        return data;
      }
      if (status === "failed") {
        throw new Error(
          `account deletion ${deletion.id} failed: ${progress.deletion.error ?? "unknown error"} (the workers retry it; see GET /v1/participant-users/deletions)`,
        );
      }
      await sleep(ctx.pollIntervalMs ?? POLL_INTERVAL_MS);
    }
  } finally {
    reporter.stop();
  }
}

export const userDeleteCommand = defineCommand({
  name: "user:delete",
  summary: "delete a participant account (LEAVE rules for every participant, then the account), following it",
  flags: () => [
    new Option("--user <ID>", "the account's id (user:find prints it)").makeOptionMandatory(),
    new Option("--no-wait", "queue the deletion and return without following it"),
  ],
  values: z
    .object({ user: text, wait: z.boolean().default(true) })
    .transform((values): UserDeleteInput => ({ userId: values.user, wait: values.wait })),
  uses: "database",
  run: userDelete,
});
