import { inArray, lte } from "drizzle-orm";
import { managementSessions, type Executor } from "@studyflow/db";
import { sweepInBatches, type BatchedSweep } from "../foundation/batched-sweep";

/**
 * Sessions removed per statement. Each statement is its own short transaction that takes the ids
 * by the expires_at index and deletes them by key: a sweep after a long outage (or the first one
 * after an upgrade) never holds thousands of row locks at once, and a sign-in or extend-session
 * meanwhile waits for one batch at most.
 */
export const SESSION_SWEEP_BATCH_SIZE = 1_000;

export type SessionSweep = BatchedSweep;

/**
 * Removes management sign-in sessions that have ended (`expires_at` at or before `now`), their
 * sealed refresh tokens with them. An ended session already opens nothing (isManagementSessionOpen
 * and the renew/extend routes compare its end with the clock), so removing it changes no answer;
 * it only stops provider refresh tokens from lying around sealed in the database longer than
 * needed. Sessions still open are never touched. Stops after `maxBatches` (the next round goes on).
 */
export async function sweepExpiredManagementSessions(
  db: Executor,
  now: Date,
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<SessionSweep> {
  return sweepInBatches(
    async (batchSize) => {
      const expired = db
        .select({ id: managementSessions.id })
        .from(managementSessions)
        .where(lte(managementSessions.expiresAt, now))
        .limit(batchSize)
        .for("update", { skipLocked: true });
      const removed = await db
        .delete(managementSessions)
        .where(inArray(managementSessions.id, expired))
        .returning({ id: managementSessions.id });
      return removed.length;
    },
    { batchSize: options.batchSize ?? SESSION_SWEEP_BATCH_SIZE, maxBatches: options.maxBatches ?? 100 },
  );
}
