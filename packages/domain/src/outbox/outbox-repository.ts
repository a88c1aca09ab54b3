import { and, asc, eq, gt, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { outgoingMessages, type Database, type Executor } from "@studyflow/db";
import { payloadWithoutSecrets } from "./secret-payload-fields";
import { ACCOUNT_DELETED_TEMPLATE } from "../participant-accounts/account-message-types";

export type OutboxMessage = typeof outgoingMessages.$inferSelect;

/**
 * Attempts before a message is given up. With the backoff below, the eighth attempt comes about
 * an hour after the first: an SMTP server restarting or briefly overloaded is ridden out, while a
 * reset link (valid for hours, not days) is not delivered long after anyone waits for it.
 */
export const OUTBOX_MAX_ATTEMPTS = 8;
/** Wait after the first failed attempt; it doubles with every further one. */
export const OUTBOX_RETRY_BASE_DELAY_MS = 30_000;
/** The longest wait between two attempts, so a long outage still gets a try every half hour. */
export const OUTBOX_RETRY_MAX_DELAY_MS = 30 * 60_000;
/**
 * A row still `sending` this long after its claim belongs to a worker that stopped. A live
 * worker finishes a claimed batch within minutes: at most 10 messages, each bounded by ~10 s
 * connection, greeting and socket timeouts per SMTP step. Half an hour leaves room for slow
 * servers and clock skew between workers; the bound only delays when the loss becomes visible.
 */
export const OUTBOX_SENDING_ABANDONED_AFTER_MS = 30 * 60_000;

export const DELIVERY_OUTCOME_UNKNOWN = "delivery outcome unknown (worker stopped while sending)";

/** SMTP replies can run long; the row keeps enough to diagnose, not a transcript. */
const LAST_ERROR_MAX_LENGTH = 1_000;

function errorText(message: string): string {
  return message.length > LAST_ERROR_MAX_LENGTH ? `${message.slice(0, LAST_ERROR_MAX_LENGTH - 1)}…` : message;
}

/** Wait before the next attempt, after `attempts` failed ones (1 or more). */
export function outboxRetryDelayMs(attempts: number): number {
  const doublings = Math.max(0, attempts - 1);
  return Math.min(OUTBOX_RETRY_BASE_DELAY_MS * 2 ** doublings, OUTBOX_RETRY_MAX_DELAY_MS);
}

/**
 * Claims up to `limit` due messages for one worker, in one statement: the rows move from
 * `pending` to `sending` with one more attempt counted, and come back oldest first. SKIP LOCKED
 * makes concurrent claims take disjoint rows instead of waiting on each other. `available_at`
 * is set to the claim time: for a `sending` row it tells how long ago it was claimed.
 *
 * The ids are picked in `array(…)`, which Postgres evaluates exactly once. As a plain `in (…)`
 * the planner may choose a nested-loop semi-join that re-runs the subquery for every row, and
 * each re-run locks and claims `limit` more rows: one worker would take the whole outbox.
 */
export async function claimDueMessages(db: Database, input: { now: Date; limit: number }): Promise<OutboxMessage[]> {
  const due = db
    .select({ id: outgoingMessages.id })
    .from(outgoingMessages)
    .where(
      and(
        eq(outgoingMessages.status, "pending"),
        lte(outgoingMessages.availableAt, input.now),
        // An expired message is never sent, even if the expiry step has not marked it yet.
        or(isNull(outgoingMessages.expiresAt), gt(outgoingMessages.expiresAt, input.now)),
      ),
    )
    .orderBy(asc(outgoingMessages.availableAt))
    .limit(input.limit)
    .for("update", { skipLocked: true });
  const claimed = await db
    .update(outgoingMessages)
    .set({ status: "sending", attempts: sql`${outgoingMessages.attempts} + 1`, availableAt: input.now })
    .where(and(sql`${outgoingMessages.id} = any(array(${due}))`, eq(outgoingMessages.status, "pending")))
    .returning();
  return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/**
 * The address of a row that ends (sent, failed, expired), kept unless the row is the last place
 * holding it: an "account deleted" mail's address belongs to an account that is gone, and, as
 * case-backend keeps sent mails without their recipients, it is not kept past delivery.
 */
const addressAfterEnd = sql`case when ${outgoingMessages.template} = ${ACCOUNT_DELETED_TEMPLATE} then null else ${outgoingMessages.toAddress} end`;

/**
 * What every statement that ends a row (sent, failed, expired) sets besides its status: the
 * address dropped where it must not outlive the mail, and the payload's one-time secrets removed
 * (SECRET_PAYLOAD_FIELDS), so a reset link or a sign-in code lives in plain text only while the
 * mail may still go out.
 */
const endOfRow = { toAddress: addressAfterEnd, payload: payloadWithoutSecrets };

/** Only the claim holder moves a row on: a row no longer `sending` is left as it is. */
function claimed(id: string) {
  return and(eq(outgoingMessages.id, id), eq(outgoingMessages.status, "sending"));
}

/** `note`: why the mail sent is not the one intended (the built-in mail for a failed template), kept as lastError. */
export async function markMessageSent(db: Executor, id: string, now: Date, note?: string): Promise<void> {
  await db
    .update(outgoingMessages)
    .set({ status: "sent", sentAt: now, ...(note === undefined ? {} : { lastError: errorText(note) }), ...endOfRow })
    .where(claimed(id));
}

/** Fails a message for good, whatever attempts it has left. */
export async function markMessageFailed(db: Executor, id: string, error: string): Promise<void> {
  await db
    .update(outgoingMessages)
    .set({ status: "failed", lastError: errorText(error), ...endOfRow })
    .where(claimed(id));
}

/**
 * Records an attempt that certainly did not deliver: the message goes back to `pending` after
 * its backoff, or fails once {@link OUTBOX_MAX_ATTEMPTS} are spent.
 */
export async function recordFailedAttempt(
  db: Executor,
  message: Pick<OutboxMessage, "id" | "attempts">,
  error: string,
  now: Date,
): Promise<"retry" | "failed"> {
  if (message.attempts >= OUTBOX_MAX_ATTEMPTS) {
    await markMessageFailed(db, message.id, `gave up after ${message.attempts} attempts: ${error}`);
    return "failed";
  }
  await db
    .update(outgoingMessages)
    .set({
      status: "pending",
      lastError: errorText(error),
      availableAt: new Date(now.getTime() + outboxRetryDelayMs(message.attempts)),
    })
    .where(claimed(message.id));
  return "retry";
}

/**
 * Hands back claimed messages that were never tried (the worker is stopping): they are
 * `pending` again, with the attempt that did not happen taken back.
 */
export async function releaseClaimedMessages(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(outgoingMessages)
    .set({ status: "pending", attempts: sql`greatest(${outgoingMessages.attempts} - 1, 0)` })
    .where(and(inArray(outgoingMessages.id, [...ids]), eq(outgoingMessages.status, "sending")));
}

export const MESSAGE_EXPIRED = "expired before it could be sent";

/** Pending messages past their expiry become `expired`: never sent, visible as such. */
export async function expireOverdueMessages(db: Executor, now: Date): Promise<string[]> {
  const expired = await db
    .update(outgoingMessages)
    .set({ status: "expired", lastError: MESSAGE_EXPIRED, ...endOfRow })
    .where(and(eq(outgoingMessages.status, "pending"), lte(outgoingMessages.expiresAt, now)))
    .returning({ id: outgoingMessages.id });
  return expired.map((row) => row.id);
}

/**
 * Fails messages left `sending` by a worker that stopped between claiming them and recording
 * the outcome. They are not retried: the worker may have handed a message to the SMTP server
 * just before it stopped, and a second copy of a reset link or a study message is worse than a
 * visible failure an operator can resend. Each message is sent at most once.
 */
export async function failAbandonedMessages(db: Executor, now: Date): Promise<string[]> {
  const cutoff = new Date(now.getTime() - OUTBOX_SENDING_ABANDONED_AFTER_MS);
  const failed = await db
    .update(outgoingMessages)
    .set({ status: "failed", lastError: DELIVERY_OUTCOME_UNKNOWN, ...endOfRow })
    .where(and(eq(outgoingMessages.status, "sending"), lt(outgoingMessages.availableAt, cutoff)))
    .returning({ id: outgoingMessages.id });
  return failed.map((row) => row.id);
}
