import { forgetCached } from "../cache/read-cache";
import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { outgoingMessages, users, type Database } from "@studyflow/db";
import { Invalid } from "../errors";
import { revokeUserSessions } from "../participant-auth/session-revocation";
import {
  accountTokenLink,
  consumeAccountToken,
  createAccountToken,
  linkValidForHours,
  peekAccountToken,
  retireAccountTokens,
} from "./account-tokens";
import { checkPasswordRule, hashPassword } from "./passwords";

const PURPOSE = "password-reset" as const;

/** One message for unknown, expired, used and malformed tokens, so none can be told apart. */
export const INVALID_RESET_TOKEN_MESSAGE = "invalid or expired reset token";

/** The form a reset token is stored and looked up in: SHA-256, hex. Also a safe rate-limit key. */
export function hashResetToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Login e-mails are stored lower-cased and trimmed; lookups must match that. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface InitiatePasswordResetInput {
  email: string;
  now: Date;
  ttlSeconds: number;
  /** Page that receives the token as `?token=…`. */
  resetUrl: string;
}

/**
 * Issues a reset token and queues the e-mail that carries it. For an unknown address it does
 * nothing and returns null, and the caller answers exactly as for a known one, so the endpoint
 * does not tell who has an account. The token is returned only for tests and operator tools;
 * the HTTP API must never reveal it.
 */
export async function initiatePasswordReset(
  db: Database,
  input: InitiatePasswordResetInput,
): Promise<{ token: string } | null> {
  const email = normalizeEmail(input.email);
  return db.transaction(async (tx) => {
    const [user] = await tx
      .select({ id: users.id, email: users.email, language: users.preferredLanguage })
      .from(users)
      .where(eq(users.email, email))
      .limit(1);
    if (!user) return null;

    const token = await createAccountToken(tx, {
      userId: user.id,
      purpose: PURPOSE,
      ttlSeconds: input.ttlSeconds,
      now: input.now,
    });

    // Written in the same transaction as the token: either both exist or neither.
    await tx.insert(outgoingMessages).values({
      template: "password-reset",
      toAddress: user.email,
      userId: user.id,
      language: user.language,
      payload: {
        resetUrl: accountTokenLink(input.resetUrl, token),
        validForHours: linkValidForHours(input.ttlSeconds),
      },
    });
    return { token };
  });
}

export interface ResetPasswordInput {
  token: string;
  newPassword: string;
  now: Date;
}

/**
 * Sets a new password with a reset token. The token is single-use even under concurrent
 * requests: it is consumed by one conditional UPDATE, and only the request whose UPDATE
 * returned the row goes on. Every session of the user ends, because the token version
 * carried by participant tokens is bumped.
 *
 * @throws Invalid with {@link INVALID_RESET_TOKEN_MESSAGE} for any unusable token, or with
 *   the password rule when the token is good but the password is not (the token then stays
 *   usable).
 */
export async function resetPassword(db: Database, input: ResetPasswordInput): Promise<{ userId: string }> {
  const { now } = input;
  // A read-only look first: it spares the argon2 work for bad tokens, and the password rule is
  // disclosed only to holders of a valid token. It decides nothing; the consuming UPDATE does.
  if (!(await peekAccountToken(db, input.token, [PURPOSE], now))) throw new Invalid(INVALID_RESET_TOKEN_MESSAGE);

  const ruleViolation = checkPasswordRule(input.newPassword);
  if (ruleViolation !== null) throw new Invalid(ruleViolation);

  // Hashing takes tens of milliseconds; done outside the transaction so no row lock waits on it.
  const passwordHash = await hashPassword(input.newPassword);

  const reset = await db.transaction(async (tx) => {
    // Of concurrent requests holding the token exactly one gets it; so does no one once it expired.
    const consumed = await consumeAccountToken(tx, input.token, [PURPOSE], now);
    if (!consumed) throw new Invalid(INVALID_RESET_TOKEN_MESSAGE);

    const [user] = await tx
      .update(users)
      .set({
        passwordHash,
        passwordChangedAt: now,
        // the link came by mail: the address is proven, and the next sign-in must just work
        accountConfirmedAt: sql`coalesce(${users.accountConfirmedAt}, ${now.toISOString()}::timestamptz)`,
      })
      .where(eq(users.id, consumed.userId))
      .returning({ id: users.id, email: users.email, language: users.preferredLanguage });
    // The token row references the user with ON DELETE CASCADE, so this is a broken invariant.
    if (!user) throw new Error(`reset token refers to missing user ${consumed.userId}`);

    // Links from earlier requests must not reset the new password again.
    await retireAccountTokens(tx, user.id, [PURPOSE], now);
    // Every session ends: refresh tokens stop renewing and the token version is bumped, so access
    // tokens issued before stop working at once.
    await revokeUserSessions(tx, user.id, "password-reset", { now });

    await tx.insert(outgoingMessages).values({
      template: "password-changed",
      toAddress: user.email,
      userId: user.id,
      language: user.language,
      payload: {},
    });
    return { userId: user.id };
  });
  // the old token version must stop working here at once, not when the announcement arrives
  forgetCached(db, "user", reset.userId);
  return reset;
}

/** The account a usable reset token belongs to (CASE's get-infos), or null: for the reset form only. */
export async function passwordResetTokenAccount(
  db: Database,
  token: string,
  now: Date,
): Promise<{ email: string } | null> {
  const holder = await peekAccountToken(db, token, [PURPOSE], now);
  if (!holder) return null;
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, holder.userId)).limit(1);
  return user ?? null;
}
