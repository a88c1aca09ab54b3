import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { participantSessions, users, type Database, type Executor } from "@studyflow/db";
import { forgetCached } from "../cache/read-cache";
import { announceSessionChanges, type SessionRevocationReason } from "./sessions";

export interface RevokeUserSessionsOptions {
  now: Date;
  /** The session that made the change and stays signed in (a password change from settings). */
  exceptSessionId?: string;
}

/**
 * Signs a user out everywhere: every open session (and so every refresh token of it) is revoked,
 * and the user's token version is bumped so access tokens already issued stop working at once.
 * Call it inside the transaction of the change that requires it. With `exceptSessionId` the
 * version is not bumped (the caller's own access token must keep working); the other sessions'
 * access tokens are refused by the session check of the participant auth instead.
 */
export async function revokeUserSessions(
  db: Executor,
  userId: string,
  reason: SessionRevocationReason,
  options: RevokeUserSessionsOptions,
): Promise<number> {
  const open = and(eq(participantSessions.userId, userId), isNull(participantSessions.revokedAt));
  const revoked = await db
    .update(participantSessions)
    .set({ revokedAt: options.now, revokedReason: reason })
    .where(options.exceptSessionId ? and(open, ne(participantSessions.id, options.exceptSessionId)) : open)
    .returning({ id: participantSessions.id });
  // their access tokens are refused as soon as every API process has heard of it
  await announceSessionChanges(
    db,
    revoked.map((row) => row.id),
  );
  if (!options.exceptSessionId) {
    await db
      .update(users)
      .set({ tokenVersion: sql`${users.tokenVersion} + 1` })
      .where(eq(users.id, userId));
    forgetCached(db, "user", userId);
  }
  return revoked.length;
}

/**
 * The participant's own "revoke my tokens" (case-backend's token/revoke, which deletes every
 * renew token of the account): every session ends, so no refresh token renews, and the token
 * version is bumped, so no access token already issued, this one included, is accepted again.
 * Answers how many sessions were still open.
 */
export async function revokeOwnTokens(db: Database, userId: string, now: Date): Promise<number> {
  const revoked = await db.transaction((tx) => revokeUserSessions(tx, userId, "tokens-revoked", { now }));
  // a request that read the account meanwhile must not keep its old token version
  forgetCached(db, "user", userId);
  return revoked;
}
