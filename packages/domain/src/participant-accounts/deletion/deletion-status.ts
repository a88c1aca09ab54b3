import { and, asc, eq, inArray, lt, ne } from "drizzle-orm";
import { accountDeletions, type Executor } from "@studyflow/db";
import { NotFound } from "../../errors";
import { deletionScope } from "./deletion-targets";
import type { AccountDeletionRow } from "./request-deletion";

export type AccountDeletionStatus = "pending" | "running" | "done" | "failed";

/** A deletion as operators follow it: how many participants are out of how many. */
export interface AccountDeletionProgress {
  deletion: AccountDeletionRow;
  /** Participants taken out so far. */
  done: number;
  /** Participants the account has; once the account is gone, the number taken out. */
  total: number;
}

export async function getAccountDeletion(db: Executor, deletionId: string): Promise<AccountDeletionRow> {
  const [row] = await db.select().from(accountDeletions).where(eq(accountDeletions.id, deletionId)).limit(1);
  if (!row) throw new NotFound(`account deletion "${deletionId}" not found`);
  return row;
}

export async function accountDeletionOfUser(db: Executor, userId: string): Promise<AccountDeletionRow | undefined> {
  const [row] = await db.select().from(accountDeletions).where(eq(accountDeletions.userId, userId)).limit(1);
  return row;
}

export async function accountDeletionProgress(db: Executor, deletionId: string): Promise<AccountDeletionProgress> {
  const deletion = await getAccountDeletion(db, deletionId);
  const done = deletion.progress.done.length;
  if (deletion.status === "done") return { deletion, done, total: done };
  const scope = await deletionScope(db, deletion.userId);
  return { deletion, done, total: Math.max(scope.targets.length, done) };
}

/** Deletions of one status or several, oldest first (the ones waiting longest are the ones to look at). */
export async function listAccountDeletions(
  db: Executor,
  query: { statuses: readonly AccountDeletionStatus[]; limit: number },
): Promise<AccountDeletionRow[]> {
  return db
    .select()
    .from(accountDeletions)
    .where(inArray(accountDeletions.status, [...query.statuses]))
    .orderBy(asc(accountDeletions.createdAt), asc(accountDeletions.id))
    .limit(query.limit);
}

/**
 * Records why a run failed, for operators (status `failed`, the error); the next attempt sets it
 * running again. The message is the error's own: domain and database errors carry no personal data.
 */
export async function markAccountDeletionFailed(db: Executor, deletionId: string, error: string): Promise<void> {
  await db
    .update(accountDeletions)
    .set({ status: "failed", error: error.slice(0, 2_000) })
    .where(and(eq(accountDeletions.id, deletionId), ne(accountDeletions.status, "done")));
}

/** Unfinished deletions requested before `before`, oldest first: the sweeper's candidates. */
export async function unfinishedAccountDeletions(
  db: Executor,
  query: { before: Date; limit: number },
): Promise<AccountDeletionRow[]> {
  return db
    .select()
    .from(accountDeletions)
    .where(and(ne(accountDeletions.status, "done"), lt(accountDeletions.createdAt, query.before)))
    .orderBy(asc(accountDeletions.createdAt))
    .limit(query.limit);
}
