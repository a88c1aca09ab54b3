import { count, eq } from "drizzle-orm";
import { profiles, users, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { accountDeletionOfUser } from "./deletion/deletion-status";
import type { AccountDeletionRow } from "./deletion/request-deletion";
import { Conflict, NotFound } from "../errors";
import { revokeUserSessions } from "../participant-sessions/session-revocation";

/** A participant account as operators see it: its state, never a hash or a token. */
export interface ParticipantAccountSummary {
  id: string;
  email: string;
  createdAt: Date;
  confirmedAt: Date | null;
  lockedAt: Date | null;
  lastLoginAt: Date | null;
  deletionRequestedAt: Date | null;
  profileCount: number;
  /** The deletion under way (or failed), if one was requested. */
  deletion: AccountDeletionRow | undefined;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Account e-mails are stored lower-cased and trimmed; a lookup is normalised the same way. */
export const normaliseAccountEmail = (email: string) => email.trim().toLowerCase();

async function summaryWhere(
  db: Executor,
  where: ReturnType<typeof eq>,
): Promise<ParticipantAccountSummary | undefined> {
  const [user] = await db
    .select({
      id: users.id,
      email: users.email,
      createdAt: users.createdAt,
      confirmedAt: users.accountConfirmedAt,
      lockedAt: users.lockedAt,
      lastLoginAt: users.lastLoginAt,
      deletionRequestedAt: users.deletionRequestedAt,
    })
    .from(users)
    .where(where)
    .limit(1);
  if (!user) return undefined;
  const [profileCount] = await db.select({ n: count() }).from(profiles).where(eq(profiles.userId, user.id));
  return { ...user, profileCount: profileCount?.n ?? 0, deletion: await accountDeletionOfUser(db, user.id) };
}

/** @throws NotFound when no account has this address. */
export async function findParticipantAccountByEmail(db: Executor, email: string): Promise<ParticipantAccountSummary> {
  const found = await summaryWhere(db, eq(users.email, normaliseAccountEmail(email)));
  if (!found) throw new NotFound("no participant account with this e-mail");
  return found;
}

/** @throws NotFound when the id names no account (a malformed id too). */
export async function getParticipantAccount(db: Executor, userId: string): Promise<ParticipantAccountSummary> {
  if (!UUID_PATTERN.test(userId)) throw new NotFound("participant account not found");
  const found = await summaryWhere(db, eq(users.id, userId));
  if (!found) throw new NotFound("participant account not found");
  return found;
}

export interface OperatorAction {
  userId: string;
  /** The management subject acting, for the audit log. */
  operator: string;
  now: Date;
}

async function lockedAccount(tx: Executor, userId: string) {
  if (!UUID_PATTERN.test(userId)) throw new NotFound("participant account not found");
  const [user] = await tx
    .select({ id: users.id, lockedAt: users.lockedAt, deletionRequestedAt: users.deletionRequestedAt })
    .from(users)
    .where(eq(users.id, userId))
    .for("update")
    .limit(1);
  if (!user) throw new NotFound("participant account not found");
  return user;
}

/**
 * Locks an account: no sign-in and no renewal until it is unlocked, and every session ends now
 * (its access tokens too). Locking a locked account changes nothing but is recorded all the same.
 */
export async function lockParticipantAccount(db: Database, action: OperatorAction): Promise<ParticipantAccountSummary> {
  await db.transaction(async (tx) => {
    const user = await lockedAccount(tx, action.userId);
    if (!user.lockedAt) await tx.update(users).set({ lockedAt: action.now }).where(eq(users.id, user.id));
    const sessions = await revokeUserSessions(tx, user.id, "account-locked", { now: action.now });
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: action.operator,
        action: "participant-user.lock",
        target: user.id,
        details: { sessions },
      },
      action.now,
    );
  });
  return getParticipantAccount(db, action.userId);
}

/** Lets a locked account sign in again. An account being deleted stays as it is. */
export async function unlockParticipantAccount(
  db: Database,
  action: OperatorAction,
): Promise<ParticipantAccountSummary> {
  await db.transaction(async (tx) => {
    const user = await lockedAccount(tx, action.userId);
    if (user.deletionRequestedAt) throw new Conflict("the account is being deleted; it cannot be unlocked");
    await tx.update(users).set({ lockedAt: null }).where(eq(users.id, user.id));
    await recordAudit(
      tx,
      { studyKey: null, actor: action.operator, action: "participant-user.unlock", target: user.id },
      action.now,
    );
  });
  return getParticipantAccount(db, action.userId);
}

/** Signs an account out everywhere (every session, every access token); returns the sessions ended. */
export async function signOutParticipantAccount(db: Database, action: OperatorAction): Promise<number> {
  return db.transaction(async (tx) => {
    const user = await lockedAccount(tx, action.userId);
    const sessions = await revokeUserSessions(tx, user.id, "operator", { now: action.now });
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: action.operator,
        action: "participant-user.sign-out",
        target: user.id,
        details: { sessions },
      },
      action.now,
    );
    return sessions;
  });
}
