import { and, eq } from "drizzle-orm";
import { outgoingMessages, users, type Database } from "@studyflow/db";
import { retireAccountLinks } from "./account-tokens";
import { checkPasswordRule, hashPassword, verifyPassword } from "./passwords";
import { forgetCached } from "../cache/read-cache";
import { Conflict, Invalid, NotFound, Unauthorized } from "../errors";
import { revokeUserSessions } from "../participant-sessions/session-revocation";

/** One message for a wrong current password, on every route that asks for it. */
export const WRONG_PASSWORD_MESSAGE = "wrong password";

export interface ChangePasswordInput {
  userId: string;
  oldPassword: string;
  newPassword: string;
  now: Date;
  /** The session that asked and stays signed in; absent (an operator's token): every session ends. */
  sessionId?: string;
}

/** The account's password hash, for the routes that ask for the current password. */
export async function accountForPasswordCheck(db: Database, userId: string) {
  const [user] = await db
    .select({
      id: users.id,
      email: users.email,
      passwordHash: users.passwordHash,
      language: users.preferredLanguage,
      externalIssuer: users.externalIssuer,
      accountConfirmedAt: users.accountConfirmedAt,
    })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  if (!user) throw new NotFound("account not found");
  if (user.externalIssuer) {
    throw new Conflict("this account signs in through an external provider; its password is kept there");
  }
  return user;
}

/** Throws Unauthorized with {@link WRONG_PASSWORD_MESSAGE} unless the password is the account's. */
export async function assertCurrentPassword(passwordHash: string, password: string): Promise<void> {
  if (!(await verifyPassword(passwordHash, password))) throw new Unauthorized(WRONG_PASSWORD_MESSAGE);
}

/**
 * Changes the password from the account settings, as case-backend does: the new password must
 * meet the policy (400), the old one must be right (401). Then, in one transaction: the new hash,
 * every other session signed out, every open link that signs in or changes the account retired
 * (retireAccountLinks), a "password changed" mail.
 * The update is conditional on the hash that was verified, so two concurrent changes cannot both
 * pass with the same old password.
 */
export async function changePassword(db: Database, input: ChangePasswordInput): Promise<void> {
  const violation = checkPasswordRule(input.newPassword);
  if (violation !== null) throw new Invalid(`newPassword: ${violation}`);
  const user = await accountForPasswordCheck(db, input.userId);
  await assertCurrentPassword(user.passwordHash, input.oldPassword);
  // Hashing takes tens of milliseconds; done before the transaction so no row lock waits on it.
  const passwordHash = await hashPassword(input.newPassword);

  await db.transaction(async (tx) => {
    const changed = await tx
      .update(users)
      .set({ passwordHash, passwordChangedAt: input.now })
      .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)))
      .returning({ id: users.id });
    if (changed.length === 0) throw new Conflict("the password was changed meanwhile; sign in again");
    await revokeUserSessions(tx, user.id, "password-change", {
      now: input.now,
      ...(input.sessionId === undefined ? {} : { exceptSessionId: input.sessionId }),
    });
    // a link asked for by whoever held the old password (a new address, a sign-in) dies with it
    await retireAccountLinks(tx, user.id, input.now);
    await tx.insert(outgoingMessages).values({
      template: "password-changed",
      toAddress: user.email,
      userId: user.id,
      language: user.language,
      payload: {},
    });
  });
  forgetCached(db, "user", user.id);
}
