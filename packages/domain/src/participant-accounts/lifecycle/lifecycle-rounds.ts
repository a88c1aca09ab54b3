import { and, asc, eq, gt, isNotNull, isNull, lte, notIlike, or, sql, type SQL } from "drizzle-orm";
import { outgoingMessages, participantSessions, users, type Database, type Executor } from "@studyflow/db";
import { accountTokenLink, createAccountToken, linkValidForHours } from "../account-tokens";
import { sweepInBatches } from "../../foundation/batched-sweep";
import { requestAccountDeletionIn } from "../deletion/request-deletion";
import { ACCOUNT_INACTIVITY_TEMPLATE, REGISTRATION_TEMPLATE } from "../account-message-types";

/**
 * The account lifecycle as case-backend's user-management job runs it; each step is off until its
 * time is set (ACCOUNT_* settings of the worker and the CLI).
 */
export interface AccountLifecycleSettings {
  /** Accounts whose address is still unproven this long after sign-up are deleted. */
  unverifiedDeleteAfterSeconds?: number | undefined;
  /** Accounts whose address is still unproven this long after sign-up get one reminder. */
  unverifiedReminderAfterSeconds?: number | undefined;
  /** Accounts without activity this long are told they will be deleted. */
  inactiveNotifyAfterSeconds?: number | undefined;
  /** How long after the notice an account that stayed inactive is deleted. */
  inactiveDeleteAfterNoticeSeconds: number;
  /** The reminder's link: the participant app's verification page, and how long the link lives. */
  verifyEmail: { url: string; ttlSeconds: number };
}

/** The settings that say which accounts a step takes (all but the reminder's link). */
export type AccountLifecycleTimes = Omit<AccountLifecycleSettings, "verifyEmail">;

/** What one step of the lifecycle does to an account. */
export type AccountLifecycleStep = "remove-unverified" | "remind-unverified" | "notify-inactive" | "delete-inactive";

export const ACCOUNT_LIFECYCLE_STEPS: readonly AccountLifecycleStep[] = [
  "remove-unverified",
  "remind-unverified",
  "delete-inactive",
  "notify-inactive",
];

/** Whether a step's time is set; unset steps do nothing and are not scheduled. */
export function lifecycleStepEnabled(settings: AccountLifecycleTimes, step: AccountLifecycleStep): boolean {
  switch (step) {
    case "remove-unverified":
      return settings.unverifiedDeleteAfterSeconds !== undefined;
    case "remind-unverified":
      return settings.unverifiedReminderAfterSeconds !== undefined;
    case "notify-inactive":
    case "delete-inactive":
      return settings.inactiveNotifyAfterSeconds !== undefined;
  }
}

/**
 * An account's last activity: sign-up, the address proven, the last sign-in, or the last use of
 * any of its sessions (every token renewal touches it). Access tokens alone leave no trace, but
 * they live an hour at most and are renewed through the session, so a participant who uses the
 * app within the inactivity time shows here.
 */
const lastActivity = sql<Date>`greatest(${users.createdAt}, ${users.accountConfirmedAt}, ${users.lastLoginAt}, (
  select max(${participantSessions.lastUsedAt}) from ${participantSessions}
  where ${participantSessions.userId} = ${users.id}))`.mapWith(users.createdAt);

const before = (now: Date, seconds: number) => new Date(now.getTime() - seconds * 1000);

/** Accounts a lifecycle step may touch: not locked by an operator and not being deleted already. */
const available = and(isNull(users.lockedAt), isNull(users.deletionRequestedAt));

/** Sign-up accounts whose address was never proven (an external provider's accounts prove theirs there). */
const unverified = and(isNull(users.accountConfirmedAt), isNull(users.externalIssuer));

/**
 * Accounts the inactivity steps handle: their address was proven, and is not a placeholder under
 * `.invalid` (RFC 2606), where no notice could ever arrive, so no deletion may follow one.
 */
const noticeable = and(isNotNull(users.accountConfirmedAt), notIlike(users.email, "%.invalid"));

/** The condition of each step at `now`; null when the step is off. */
function stepCondition(settings: AccountLifecycleTimes, step: AccountLifecycleStep, now: Date): SQL | null {
  const removeAfter = settings.unverifiedDeleteAfterSeconds;
  switch (step) {
    case "remove-unverified":
      if (removeAfter === undefined) return null;
      return and(available, unverified, lte(users.createdAt, before(now, removeAfter))) ?? null;
    case "remind-unverified": {
      const remindAfter = settings.unverifiedReminderAfterSeconds;
      if (remindAfter === undefined) return null;
      return (
        and(
          available,
          unverified,
          isNull(users.verificationReminderSentAt),
          lte(users.createdAt, before(now, remindAfter)),
          // An account due for removal is removed, not reminded.
          removeAfter === undefined ? undefined : gt(users.createdAt, before(now, removeAfter)),
        ) ?? null
      );
    }
    case "notify-inactive": {
      const notifyAfter = settings.inactiveNotifyAfterSeconds;
      if (notifyAfter === undefined) return null;
      return (
        and(
          available,
          noticeable,
          sql`${lastActivity} <= ${before(now, notifyAfter).toISOString()}::timestamptz`,
          // Not told since its last activity: one notice per stretch of inactivity.
          or(isNull(users.inactivityNotifiedAt), sql`${users.inactivityNotifiedAt} < ${lastActivity}`),
        ) ?? null
      );
    }
    case "delete-inactive": {
      if (settings.inactiveNotifyAfterSeconds === undefined) return null;
      const graceStart = before(now, settings.inactiveDeleteAfterNoticeSeconds);
      return (
        and(
          available,
          noticeable,
          isNotNull(users.inactivityNotifiedAt),
          lte(users.inactivityNotifiedAt, graceStart),
          // No sign-in, renewal or proof since the notice.
          sql`${lastActivity} < ${users.inactivityNotifiedAt}`,
          // The notice is out, and out for the whole grace period: a notice still waiting for
          // delivery (SMTP down or not configured) holds the deletion back. A notice that failed
          // for good (the address bounces) does not: the account is as unreachable as it is idle.
          sql`not exists (select 1 from ${outgoingMessages}
            where ${outgoingMessages.userId} = ${users.id}
              and ${outgoingMessages.template} = ${ACCOUNT_INACTIVITY_TEMPLATE}
              and (${outgoingMessages.status} in ('pending', 'sending') or ${outgoingMessages.sentAt} > ${graceStart.toISOString()}::timestamptz))`,
        ) ?? null
      );
    }
  }
}

/** An account a step would handle, as the dry run lists it (no address: the id is enough to act on). */
export interface AccountLifecycleCandidate {
  userId: string;
  createdAt: Date;
  lastActivityAt: Date;
  inactivityNotifiedAt: Date | null;
}

/** What the next round of each enabled step would handle, oldest accounts first, at most `limit` each. */
export async function planAccountLifecycle(
  db: Executor,
  settings: AccountLifecycleTimes,
  input: { now: Date; limit: number },
): Promise<Partial<Record<AccountLifecycleStep, AccountLifecycleCandidate[]>>> {
  const plan: Partial<Record<AccountLifecycleStep, AccountLifecycleCandidate[]>> = {};
  for (const step of ACCOUNT_LIFECYCLE_STEPS) {
    const condition = stepCondition(settings, step, input.now);
    if (condition === null) continue;
    plan[step] = await db
      .select({
        userId: users.id,
        createdAt: users.createdAt,
        lastActivityAt: lastActivity,
        inactivityNotifiedAt: users.inactivityNotifiedAt,
      })
      .from(users)
      .where(condition)
      .orderBy(asc(users.createdAt), asc(users.id))
      .limit(input.limit);
  }
  return plan;
}

/**
 * Accounts per transaction. Each deletion request revokes sessions and writes an audit record,
 * each notice a token or an outbox row: 50 keeps a transaction's locks and its work to well under
 * a second, so a participant signing in meanwhile waits that long at most.
 */
export const LIFECYCLE_BATCH_SIZE = 50;

/**
 * Batches per round: 2,000 accounts. The first round after switching a step on may find years of
 * accounts; the next round (an hour later) goes on where this one stopped.
 */
export const LIFECYCLE_MAX_BATCHES = 40;

export interface AccountLifecycleRound {
  step: AccountLifecycleStep;
  /** Accounts handled: deletions requested, reminders or notices queued. */
  handled: number;
  batches: number;
  /** The deletions requested, for the caller to queue their tasks after the commit. */
  deletionIds: string[];
}

interface LockedAccount {
  id: string;
  email: string;
  language: string;
}

/**
 * One step over every account due, in batches: each batch locks its accounts (skipping any that
 * another round or a sign-in holds) and handles them in one transaction whose WHERE re-checks
 * the step's condition, so two workers' overlapping rounds never handle an account twice and an
 * account that signed in meanwhile is not touched.
 */
export async function runAccountLifecycleStep(
  db: Database,
  settings: AccountLifecycleSettings,
  step: AccountLifecycleStep,
  input: { now: Date; batchSize?: number; maxBatches?: number },
): Promise<AccountLifecycleRound> {
  const round: AccountLifecycleRound = { step, handled: 0, batches: 0, deletionIds: [] };
  const condition = stepCondition(settings, step, input.now);
  if (condition === null) return round;
  const sweep = await sweepInBatches(
    (batchSize) =>
      db.transaction(async (tx) => {
        const locked: LockedAccount[] = await tx
          .select({ id: users.id, email: users.email, language: users.preferredLanguage })
          .from(users)
          .where(condition)
          .orderBy(asc(users.createdAt), asc(users.id))
          .limit(batchSize)
          .for("update", { of: users, skipLocked: true });
        for (const account of locked) {
          const deletionId = await handleAccount(tx, settings, step, account, input.now);
          if (deletionId !== null) round.deletionIds.push(deletionId);
        }
        return locked.length;
      }),
    { batchSize: input.batchSize ?? LIFECYCLE_BATCH_SIZE, maxBatches: input.maxBatches ?? LIFECYCLE_MAX_BATCHES },
  );
  round.handled = sweep.removed;
  round.batches = sweep.batches;
  return round;
}

/** Actor of the audit records of lifecycle deletions. */
export const ACCOUNT_LIFECYCLE_ACTOR = "account-lifecycle";

async function handleAccount(
  tx: Executor,
  settings: AccountLifecycleSettings,
  step: AccountLifecycleStep,
  account: LockedAccount,
  now: Date,
): Promise<string | null> {
  switch (step) {
    case "remove-unverified":
    case "delete-inactive": {
      // The deletion path every deletion takes: sessions revoked, LEAVE rules, audit, the task.
      const requested = await requestAccountDeletionIn(tx, {
        userId: account.id,
        now,
        operator: ACCOUNT_LIFECYCLE_ACTOR,
        reason: step === "remove-unverified" ? "unverified" : "inactivity",
      });
      return requested.deletion.id;
    }
    case "remind-unverified": {
      // A new link, as case-backend mails with its reminder: the sign-up link may have expired.
      const token = await createAccountToken(tx, {
        userId: account.id,
        purpose: "verify-email",
        ttlSeconds: settings.verifyEmail.ttlSeconds,
        now,
        info: { email: account.email },
      });
      await tx.insert(outgoingMessages).values({
        template: REGISTRATION_TEMPLATE,
        toAddress: account.email,
        userId: account.id,
        language: account.language,
        payload: {
          token,
          verifyUrl: accountTokenLink(settings.verifyEmail.url, token),
          validForHours: linkValidForHours(settings.verifyEmail.ttlSeconds),
        },
      });
      await tx.update(users).set({ verificationReminderSentAt: now }).where(eq(users.id, account.id));
      return null;
    }
    case "notify-inactive": {
      await tx.insert(outgoingMessages).values({
        template: ACCOUNT_INACTIVITY_TEMPLATE,
        toAddress: account.email,
        userId: account.id,
        language: account.language,
        payload: { deleteAfterDays: Math.max(1, Math.round(settings.inactiveDeleteAfterNoticeSeconds / 86_400)) },
      });
      await tx.update(users).set({ inactivityNotifiedAt: now }).where(eq(users.id, account.id));
      return null;
    }
  }
}
