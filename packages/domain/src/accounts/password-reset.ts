import { forgetCached } from "../cache/read-cache";
import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { outgoingMessages, passwordResetTokens, users, type Database } from "@studyflow/db";
import { Invalid } from "../errors";
import { checkPasswordRule, hashPassword } from "./passwords";

const PURPOSE = "password-reset";

/** One message for unknown, expired, used and malformed tokens, so none can be told apart. */
export const INVALID_RESET_TOKEN_MESSAGE = "invalid or expired reset token";

/** 256 bits of randomness: far beyond guessing, even without the rate limits. */
const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

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

    const token = randomBytes(TOKEN_BYTES).toString("base64url");
    await tx.insert(passwordResetTokens).values({
      userId: user.id,
      tokenHash: hashResetToken(token),
      purpose: PURPOSE,
      expiresAt: new Date(input.now.getTime() + input.ttlSeconds * 1000),
    });

    const link = new URL(input.resetUrl);
    link.searchParams.set("token", token);
    // Written in the same transaction as the token: either both exist or neither.
    await tx.insert(outgoingMessages).values({
      template: "password-reset",
      toAddress: user.email,
      userId: user.id,
      language: user.language,
      payload: { resetUrl: link.toString(), validForHours: Math.round(input.ttlSeconds / 360) / 10 },
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
  if (!TOKEN_PATTERN.test(input.token)) throw new Invalid(INVALID_RESET_TOKEN_MESSAGE);
  const tokenHash = hashResetToken(input.token);
  const usable = and(
    eq(passwordResetTokens.tokenHash, tokenHash),
    eq(passwordResetTokens.purpose, PURPOSE),
    isNull(passwordResetTokens.usedAt),
    gt(passwordResetTokens.expiresAt, now),
  );

  // A read-only look first: it spares the argon2 work for bad tokens, and the password rule is
  // disclosed only to holders of a valid token. It decides nothing; the UPDATE below does.
  const [candidate] = await db.select({ id: passwordResetTokens.id }).from(passwordResetTokens).where(usable).limit(1);
  if (!candidate) throw new Invalid(INVALID_RESET_TOKEN_MESSAGE);

  const ruleViolation = checkPasswordRule(input.newPassword);
  if (ruleViolation !== null) throw new Invalid(ruleViolation);

  // Hashing takes tens of milliseconds; done outside the transaction so no row lock waits on it.
  const passwordHash = await hashPassword(input.newPassword);

  const reset = await db.transaction(async (tx) => {
    const [consumed] = await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(usable)
      .returning({ userId: passwordResetTokens.userId });
    // Lost a race with another request holding the same token, or the token expired meanwhile.
    if (!consumed) throw new Invalid(INVALID_RESET_TOKEN_MESSAGE);

    const [user] = await tx
      .update(users)
      .set({
        passwordHash,
        passwordChangedAt: now,
        tokenVersion: sql`${users.tokenVersion} + 1`,
      })
      .where(eq(users.id, consumed.userId))
      .returning({ id: users.id, email: users.email, language: users.preferredLanguage });
    // The token row references the user with ON DELETE CASCADE, so this is a broken invariant.
    if (!user) throw new Error(`reset token refers to missing user ${consumed.userId}`);

    // Links from earlier requests must not reset the new password again.
    await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(passwordResetTokens.userId, user.id),
          eq(passwordResetTokens.purpose, PURPOSE),
          isNull(passwordResetTokens.usedAt),
        ),
      );

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
