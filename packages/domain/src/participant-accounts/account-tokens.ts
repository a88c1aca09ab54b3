import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, inArray, isNull, notInArray, or, sql, type SQL } from "drizzle-orm";
import { passwordResetTokens, users, type Executor, type TokenPurpose } from "@studyflow/db";

/**
 * One-time account tokens: the links studyflow mails (password reset, e-mail verification, a new
 * address, CASE's survey-login temp tokens, newsletter unsubscription). 256 random bits, stored
 * only as their SHA-256, single use, with an expiry; `info` carries purpose-specific data.
 */
const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
export const ACCOUNT_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const hashAccountToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

export interface CreateAccountTokenInput {
  userId: string;
  purpose: TokenPurpose;
  ttlSeconds: number;
  now: Date;
  info?: Record<string, string>;
}

/** Issues a token; the caller mails it (in the same transaction, so both exist or neither). */
export async function createAccountToken(db: Executor, input: CreateAccountTokenInput): Promise<string> {
  const token = randomBytes(TOKEN_BYTES).toString("base64url");
  await db.insert(passwordResetTokens).values({
    userId: input.userId,
    tokenHash: hashAccountToken(token),
    purpose: input.purpose,
    info: input.info ?? {},
    expiresAt: new Date(input.now.getTime() + input.ttlSeconds * 1000),
  });
  return token;
}

/** The link a mail carries: the page at `pageUrl` with the token as `?token=`. */
export function accountTokenLink(pageUrl: string, token: string): string {
  const link = new URL(pageUrl);
  link.searchParams.set("token", token);
  return link.toString();
}

/** How long a mailed link stays usable, as the mails say it: hours, to one decimal. */
export const linkValidForHours = (ttlSeconds: number): number => Math.round(ttlSeconds / 360) / 10;

export interface AccountTokenHolder {
  id: string;
  userId: string;
  purpose: TokenPurpose;
  info: Record<string, string>;
  expiresAt: Date;
}

const usable = (token: string, purposes: readonly TokenPurpose[], now: Date, afterUse: readonly TokenPurpose[] = []) =>
  and(
    eq(passwordResetTokens.tokenHash, hashAccountToken(token)),
    inArray(passwordResetTokens.purpose, [...purposes]),
    afterUse.length === 0
      ? isNull(passwordResetTokens.usedAt)
      : or(isNull(passwordResetTokens.usedAt), inArray(passwordResetTokens.purpose, [...afterUse])),
    gt(passwordResetTokens.expiresAt, now),
  );

const holderColumns = {
  id: passwordResetTokens.id,
  userId: passwordResetTokens.userId,
  purpose: passwordResetTokens.purpose,
  info: passwordResetTokens.info,
  expiresAt: passwordResetTokens.expiresAt,
};

export interface PeekAccountTokenOptions {
  /**
   * Purposes whose tokens still count after their use, until they expire: a used verify-email link
   * still signs in through login-with-temptoken for the hour verifyEmailToken leaves it. A retired
   * token has expired (retireAccountTokens), so it never counts.
   */
  afterUse?: readonly TokenPurpose[];
}

/** Reads a usable token without spending it (CASE's get-infos, temptoken-info); null when unusable. */
export async function peekAccountToken(
  db: Executor,
  token: string,
  purposes: readonly TokenPurpose[],
  now: Date,
  options: PeekAccountTokenOptions = {},
): Promise<AccountTokenHolder | null> {
  if (!ACCOUNT_TOKEN_PATTERN.test(token)) return null;
  const [row] = await db
    .select(holderColumns)
    .from(passwordResetTokens)
    .where(usable(token, purposes, now, options.afterUse))
    .limit(1);
  return row ?? null;
}

/** An account a link leads to, with what the survey-login routes need of it. */
export interface AccountTokenAccount {
  userId: string;
  email: string;
  passwordHash: string;
}

/**
 * The account a usable token belongs to (peekAccountToken, then the account's address and
 * password hash); null when the token is unusable or its account is gone.
 */
export async function peekAccountTokenAccount(
  db: Executor,
  token: string,
  purposes: readonly TokenPurpose[],
  now: Date,
  options: PeekAccountTokenOptions = {},
): Promise<AccountTokenAccount | null> {
  const holder = await peekAccountToken(db, token, purposes, now, options);
  if (!holder) return null;
  const [user] = await db
    .select({ email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, holder.userId))
    .limit(1);
  return user ? { userId: holder.userId, ...user } : null;
}

/**
 * Spends a token: one conditional UPDATE, so of concurrent requests holding it exactly one gets
 * the holder back; the others (and unknown, expired, used or malformed tokens) get null. Call it
 * inside the transaction that does what the token allows, so a failure leaves the token usable.
 */
export async function consumeAccountToken(
  db: Executor,
  token: string,
  purposes: readonly TokenPurpose[],
  now: Date,
): Promise<AccountTokenHolder | null> {
  if (!ACCOUNT_TOKEN_PATTERN.test(token)) return null;
  const [row] = await db
    .update(passwordResetTokens)
    .set({ usedAt: now })
    .where(usable(token, purposes, now))
    .returning(holderColumns);
  return row ?? null;
}

/**
 * Retires every token of a user for these purposes: older links stop working. Used tokens are
 * retired too (a used verify-email link still signs in for an hour, see peekAccountToken), and the
 * expiry is brought to now, so no "after use" rule can revive a retired token; the sweep then
 * removes the rows.
 */
export async function retireAccountTokens(
  db: Executor,
  userId: string,
  purposes: readonly TokenPurpose[],
  now: Date,
): Promise<void> {
  await retireWhere(db, userId, inArray(passwordResetTokens.purpose, [...purposes]), now);
}

/**
 * What stays usable when the password is reset or changed: a newsletter-unsubscribe link only turns
 * the newsletter off (no sign-in, no account data, nothing another link could not undo from the
 * settings), and every newsletter already mailed carries one, so retiring it would break those
 * links for nothing.
 */
export const PURPOSES_KEPT_ON_PASSWORD_CHANGE: readonly TokenPurpose[] = ["unsubscribe-newsletter"];

/**
 * Retires every outstanding link of a user that signs in or changes the account (password reset,
 * verify-email, change-email, survey-login, account deletion, and any purpose added later): call it
 * in the transaction of a password reset or change, so a link mailed (or taken) before no longer
 * works under the new password. Only PURPOSES_KEPT_ON_PASSWORD_CHANGE survive.
 */
export async function retireAccountLinks(db: Executor, userId: string, now: Date): Promise<void> {
  await retireWhere(db, userId, notInArray(passwordResetTokens.purpose, [...PURPOSES_KEPT_ON_PASSWORD_CHANGE]), now);
}

async function retireWhere(db: Executor, userId: string, purposes: SQL | undefined, now: Date): Promise<void> {
  const at = now.toISOString();
  await db
    .update(passwordResetTokens)
    .set({
      usedAt: sql`coalesce(${passwordResetTokens.usedAt}, ${at}::timestamptz)`,
      expiresAt: sql`least(${passwordResetTokens.expiresAt}, ${at}::timestamptz)`,
    })
    .where(and(eq(passwordResetTokens.userId, userId), purposes, gt(passwordResetTokens.expiresAt, now)));
}
