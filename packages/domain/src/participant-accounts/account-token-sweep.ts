import { inArray, lte } from "drizzle-orm";
import { passwordResetTokens, type Executor } from "@studyflow/db";
import { sweepInBatches, type BatchedSweep } from "../foundation/batched-sweep";

/**
 * Account tokens removed per statement. Taken without an index on the expiry (a sequential scan
 * each statement): the table holds one row per mailed link, and an hourly round finds few.
 */
export const ACCOUNT_TOKEN_SWEEP_BATCH_SIZE = 1_000;

/**
 * Removes one-time account tokens past their expiry: password reset, e-mail verification and
 * change, survey login, newsletter unsubscribe and account deletion links, used or not. An expired
 * token is already refused exactly as an unknown one (account-tokens.ts), so removing it changes no
 * answer; it stops the mailed links of every scheduled e-mail and password reset from piling up.
 * Tokens still valid are never touched. Stops after `maxBatches` (the next round goes on).
 */
export async function sweepExpiredAccountTokens(
  db: Executor,
  now: Date,
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<BatchedSweep> {
  return sweepInBatches(
    async (batchSize) => {
      const expired = db
        .select({ id: passwordResetTokens.id })
        .from(passwordResetTokens)
        .where(lte(passwordResetTokens.expiresAt, now))
        .limit(batchSize)
        .for("update", { skipLocked: true });
      const removed = await db
        .delete(passwordResetTokens)
        .where(inArray(passwordResetTokens.id, expired))
        .returning({ id: passwordResetTokens.id });
      return removed.length;
    },
    { batchSize: options.batchSize ?? ACCOUNT_TOKEN_SWEEP_BATCH_SIZE, maxBatches: options.maxBatches ?? 100 },
  );
}
