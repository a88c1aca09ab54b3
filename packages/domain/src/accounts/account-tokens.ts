import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, inArray, isNull } from "drizzle-orm";
import { passwordResetTokens, type Executor, type TokenPurpose } from "@studyflow/db";

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

const usable = (token: string, purposes: readonly TokenPurpose[], now: Date) =>
  and(
    eq(passwordResetTokens.tokenHash, hashAccountToken(token)),
    inArray(passwordResetTokens.purpose, [...purposes]),
    isNull(passwordResetTokens.usedAt),
    gt(passwordResetTokens.expiresAt, now),
  );

const holderColumns = {
  id: passwordResetTokens.id,
  userId: passwordResetTokens.userId,
  purpose: passwordResetTokens.purpose,
  info: passwordResetTokens.info,
  expiresAt: passwordResetTokens.expiresAt,
};

/** Reads a usable token without spending it (CASE's get-infos, temptoken-info); null when unusable. */
export async function peekAccountToken(
  db: Executor,
  token: string,
  purposes: readonly TokenPurpose[],
  now: Date,
): Promise<AccountTokenHolder | null> {
  if (!ACCOUNT_TOKEN_PATTERN.test(token)) return null;
  const [row] = await db
    .select(holderColumns)
    .from(passwordResetTokens)
    .where(usable(token, purposes, now))
    .limit(1);
  return row ?? null;
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

/** Spends every open token of a user for these purposes (older links stop working). */
export async function retireAccountTokens(
  db: Executor,
  userId: string,
  purposes: readonly TokenPurpose[],
  now: Date,
): Promise<void> {
  await db
    .update(passwordResetTokens)
    .set({ usedAt: now })
    .where(
      and(
        eq(passwordResetTokens.userId, userId),
        inArray(passwordResetTokens.purpose, [...purposes]),
        isNull(passwordResetTokens.usedAt),
      ),
    );
}
