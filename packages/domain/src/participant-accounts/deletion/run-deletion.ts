import { and, eq, inArray, ne } from "drizzle-orm";
import {
  accountDeletions,
  confidentialIdMap,
  confidentialResponses,
  outgoingMessages,
  studies,
  users,
  type AccountDeletionReason,
  type Database,
  type Executor,
} from "@studyflow/db";
import { recordAudit } from "../../foundation/audit";
import { NotFound } from "../../errors";
import { ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE, ACCOUNT_DELETED_TEMPLATE } from "../account-message-types";
import { inEventTransaction, type DomainContext } from "../../events/event-runner";
import { nowSeconds } from "../../foundation/clock";
import { leaveLockedParticipant } from "../../events/leave-study";
import { RulesRejectedEvent } from "../../events/rule-failures";
import {
  lockParticipant,
  lockParticipantForEvent,
  saveParticipantState,
  toEngineState,
} from "../../participants/participant-repository";
import { deletionScope, type DeletionTarget } from "./deletion-targets";

/** CASE's status of a participant whose account was deleted: no more events, kept for the data. */
const ACCOUNT_DELETED_STATUS = "accountDeleted";

/** Actor of the audit record of a finished deletion: the task, whoever asked for it. */
export const ACCOUNT_DELETION_ACTOR = "account-deletion";

export interface AccountDeletionOutcome {
  /** `done`: the account is gone; `gone`: there was no such deletion (nothing to do). */
  status: "done" | "gone";
  profiles: number;
  studies: number;
  participants: number;
}

export interface RunAccountDeletionOptions {
  /**
   * Told after each participant's change has committed, with the count done and the total: the
   * worker reports it on the job. An error thrown here stops the run as a crash would (tests).
   */
  onParticipantDone?: (done: number, total: number) => void | Promise<void>;
}

/**
 * How long the "account deleted" mail may wait for delivery. Its row is the last place holding the
 * address, and the outbox clears it when the row ends (sent, failed, expired); a worker or SMTP
 * outage of up to a day still gets the confirmation out, a longer one drops it with the address.
 */
export const ACCOUNT_DELETED_MAIL_TTL_MS = 24 * 3_600_000;

/**
 * Addresses under the reserved `.invalid` top-level domain (RFC 2606) are placeholders, such as
 * the one an external identity without a usable e-mail gets: nobody can receive a mail there.
 */
const UNDELIVERABLE_ADDRESS = /\.invalid$/i;

/**
 * Rounds of "take out the participants, then finish" before giving up: a participant that appears
 * while the account is being deleted (an operator adding one by hand) is taken out in the next
 * round; one that keeps appearing is a bug worth a failed deletion.
 */
const MAX_ROUNDS = 3;

/**
 * The confirmation mailed once the account is gone, by why it went: CASE's message types. An
 * account removed because its address was never proven gets none: nobody showed the address is
 * theirs, so a mail there could tell a stranger about someone's sign-up.
 */
const CONFIRMATION_BY_REASON: Record<AccountDeletionReason, string | null> = {
  requested: ACCOUNT_DELETED_TEMPLATE,
  inactivity: ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE,
  unverified: null,
};

/**
 * The deletion task: for every participant of every profile of the account, in every study, the
 * LEAVE event runs through the event pipeline and the participant ends as `accountDeleted` with
 * its confidential responses removed; each participant commits with its entry in the row's
 * progress, so a run that dies resumes at the next participant, never redoing or skipping one.
 * Then, in one transaction, the account row goes (profiles, sessions and tokens with it), its
 * earlier outbox mails go, the "account deleted" confirmation is queued to the address it had,
 * the audit log records the deletion (account id and counts, nothing personal) and the row is done.
 *
 * Rules run only in active studies (as for every participant event); in an inactive study the
 * participant is marked without them. A strict study whose LEAVE rules fail cannot refuse an
 * account's deletion: the failures are recorded and the participant is marked without the rules.
 */
export async function runAccountDeletion(
  db: Database,
  deletionId: string,
  ctx: DomainContext,
  options: RunAccountDeletionOptions = {},
): Promise<AccountDeletionOutcome> {
  const [deletion] = await db.select().from(accountDeletions).where(eq(accountDeletions.id, deletionId)).limit(1);
  if (!deletion || deletion.status === "done") {
    return { status: "gone", profiles: 0, studies: 0, participants: 0 };
  }
  await db
    .update(accountDeletions)
    .set({ status: "running", error: null })
    .where(and(eq(accountDeletions.id, deletionId), ne(accountDeletions.status, "done")));

  for (let round = 0; round < MAX_ROUNDS; round++) {
    const scope = await deletionScope(db, deletion.userId);
    const done = new Set(await progressOf(db, deletionId));
    const total = scope.targets.length;
    let count = scope.targets.filter((target) => done.has(target.progressKey)).length;
    for (const target of scope.targets) {
      if (done.has(target.progressKey)) continue;
      await takeOutParticipant(db, deletionId, target, ctx);
      count++;
      await options.onParticipantDone?.(count, total);
    }
    const finished = await finishDeletion(
      db,
      deletionId,
      deletion.userId,
      CONFIRMATION_BY_REASON[deletion.reason],
      ctx,
    );
    if (finished) return finished;
  }
  throw new Error("participants of the account kept appearing while it was being deleted");
}

async function progressOf(db: Executor, deletionId: string): Promise<string[]> {
  const [row] = await db
    .select({ progress: accountDeletions.progress })
    .from(accountDeletions)
    .where(eq(accountDeletions.id, deletionId))
    .limit(1);
  if (!row) throw new NotFound("account deletion not found");
  return row.progress.done;
}

/** The row's progress, locked until the transaction ends: two runs of one deletion take turns. */
async function lockProgress(tx: Executor, deletionId: string): Promise<string[]> {
  const [row] = await tx
    .select({ progress: accountDeletions.progress })
    .from(accountDeletions)
    .where(eq(accountDeletions.id, deletionId))
    .for("update")
    .limit(1);
  if (!row) throw new NotFound("account deletion not found");
  return row.progress.done;
}

/** One participant out, committed together with its entry in the progress. */
async function takeOutParticipant(db: Database, deletionId: string, target: DeletionTarget, ctx: DomainContext) {
  try {
    await inEventTransaction(db, ctx, (tx, eventCtx) =>
      inProgressStep(tx, deletionId, target, async () => {
        const [study] = await tx.select().from(studies).where(eq(studies.key, target.studyKey)).limit(1);
        if (!study) return;
        if (study.status !== "active") return markWithoutRules(tx, target, ctx);
        // Conflict if the study was set inactive meanwhile: the job's retry takes the other branch.
        const row = await lockParticipantForEvent(tx, study.key, target.participantId);
        if (!row || row.studyStatus === ACCOUNT_DELETED_STATUS) return removeConfidential(tx, target);
        await leaveLockedParticipant(
          tx,
          { study, row, confidentialId: target.confidentialId, finalStatus: ACCOUNT_DELETED_STATUS },
          eventCtx,
        );
      }),
    );
  } catch (error) {
    // inEventTransaction has recorded the strict study's failures; the deletion goes on without them.
    if (!(error instanceof RulesRejectedEvent)) throw error;
    await db.transaction((tx) => inProgressStep(tx, deletionId, target, () => markWithoutRules(tx, target, ctx)));
  }
}

async function inProgressStep(tx: Executor, deletionId: string, target: DeletionTarget, work: () => Promise<void>) {
  const done = await lockProgress(tx, deletionId);
  // Another run of this deletion took the participant out while this one waited for the lock.
  if (done.includes(target.progressKey)) return;
  await work();
  await tx
    .update(accountDeletions)
    .set({ progress: { done: [...done, target.progressKey] } })
    .where(eq(accountDeletions.id, deletionId));
}

async function markWithoutRules(tx: Executor, target: DeletionTarget, ctx: DomainContext) {
  const row = await lockParticipant(tx, target.studyKey, target.participantId);
  if (row && row.studyStatus !== ACCOUNT_DELETED_STATUS) {
    await saveParticipantState(
      tx,
      row,
      { ...toEngineState(row), studyStatus: ACCOUNT_DELETED_STATUS },
      nowSeconds(ctx),
    );
  }
  await removeConfidential(tx, target);
}

async function removeConfidential(tx: Executor, target: DeletionTarget) {
  await tx
    .delete(confidentialResponses)
    .where(
      and(
        eq(confidentialResponses.studyKey, target.studyKey),
        eq(confidentialResponses.confidentialId, target.confidentialId),
      ),
    );
}

/**
 * The account row with what cascades from it (profiles, sessions, tokens), the confidential-id
 * map entries of its profiles and its mails, sent or not: they hold its address and link it to the
 * id the audit log keeps. Returns the address and language it had, read before the row went.
 */
export async function removeAccountRows(
  tx: Executor,
  userId: string,
  profileIds: readonly string[],
): Promise<{ email: string; language: string } | undefined> {
  if (profileIds.length > 0) {
    await tx.delete(confidentialIdMap).where(inArray(confidentialIdMap.profileId, [...profileIds]));
  }
  const [account] = await tx
    .select({ email: users.email, language: users.preferredLanguage })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  await tx.delete(outgoingMessages).where(eq(outgoingMessages.userId, userId));
  await tx.delete(users).where(eq(users.id, userId));
  return account;
}

/**
 * The last step, in one transaction: when every participant is out, the account row goes with
 * what cascades from it, the confidential-id map entries of its profiles go, the audit log
 * records it and the row is done. Null when a participant is still left (a new round follows).
 */
async function finishDeletion(
  db: Database,
  deletionId: string,
  userId: string,
  confirmationTemplate: string | null,
  ctx: DomainContext,
): Promise<AccountDeletionOutcome | null> {
  return db.transaction(async (tx) => {
    const done = new Set(await lockProgress(tx, deletionId));
    const scope = await deletionScope(tx, userId);
    if (scope.targets.some((target) => !done.has(target.progressKey))) return null;
    const outcome: AccountDeletionOutcome = {
      status: "done",
      profiles: scope.profileIds.length,
      studies: new Set(scope.targets.map((target) => target.studyKey)).size,
      participants: scope.targets.length,
    };
    const now = new Date(ctx.clock());
    // The address is read before the row goes; the confirmation carries it, and nothing else does.
    const account = await removeAccountRows(tx, userId, scope.profileIds);
    if (account && confirmationTemplate !== null && !UNDELIVERABLE_ADDRESS.test(account.email)) {
      // As case-backend mails it when it deletes a user; queued in this transaction, so it goes
      // out once the account is gone, and never for an account that stayed. No user id: the row
      // must not tie the address to the deleted account's id.
      await tx.insert(outgoingMessages).values({
        template: confirmationTemplate,
        toAddress: account.email,
        userId: null,
        language: account.language,
        payload: {},
        expiresAt: new Date(now.getTime() + ACCOUNT_DELETED_MAIL_TTL_MS),
      });
    }
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: ACCOUNT_DELETION_ACTOR,
        action: "participant-user.delete",
        target: userId,
        details: {
          deletionId,
          profiles: outcome.profiles,
          studies: outcome.studies,
          participants: outcome.participants,
        },
      },
      now,
    );
    await tx
      .update(accountDeletions)
      .set({ status: "done", error: null, finishedAt: now })
      .where(eq(accountDeletions.id, deletionId));
    return outcome;
  });
}
