import { forgetCached } from "../cache/read-cache";
import { createHash, randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { executePrepared, outgoingMessages, passwordResetTokens, users, type Database } from "@studyflow/db";
import { Invalid } from "../errors";
import { revokeUserSessions } from "../participant-sessions/session-revocation";
import {
  accountTokenLink,
  consumeAccountToken,
  hashAccountToken,
  linkValidForHours,
  peekAccountToken,
  retireAccountLinks,
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
 * Issues a reset token and queues the e-mail that carries it. For an unknown address it issues
 * nothing and returns null, and the caller answers exactly as for a known one, so the endpoint
 * does not tell who has an account. The token is returned only for tests and operator tools;
 * the HTTP API must never reveal it.
 *
 * Known and unknown addresses cost the same: the token and its link are made either way, and one
 * prepared statement (one round trip, atomic as a statement is) looks the account up and writes
 * the token and the outbox row only if it found one. The statement takes a transaction id either
 * way, so both commits write and flush a WAL record: a read-only commit skips the flush and would
 * answer an unknown address faster. What remains is writing two rows inside that one round trip,
 * microseconds. Writing after the answer instead (a queued job) would need a worker round before
 * the mail and keep the address in Redis, for no better equality.
 */
export async function initiatePasswordReset(
  db: Database,
  input: InitiatePasswordResetInput,
): Promise<{ token: string } | null> {
  const email = normalizeEmail(input.email);
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(input.now.getTime() + input.ttlSeconds * 1000);
  const payload = {
    resetUrl: accountTokenLink(input.resetUrl, token),
    validForHours: linkValidForHours(input.ttlSeconds),
  };
  const column = (c: AnyPgColumn) => sql.identifier(c.name);
  const t = passwordResetTokens;
  const m = outgoingMessages;
  const rows = await executePrepared<{ issued: number }>(
    db,
    sql`
    with account as (
      select ${users.id} as id, ${users.email} as email, ${users.preferredLanguage} as language
      from ${users} where ${users.email} = ${email} limit 1
    ), token as (
      insert into ${t} (${column(t.userId)}, ${column(t.tokenHash)}, ${column(t.purpose)}, ${column(t.expiresAt)})
      select id, ${hashAccountToken(token)}, ${PURPOSE}, ${expiresAt.toISOString()}::timestamptz from account
      returning 1
    ), mail as (
      insert into ${m} (${column(m.template)}, ${column(m.toAddress)}, ${column(m.userId)}, ${column(m.language)},
        ${column(m.payload)})
      select 'password-reset', email, id, language, ${JSON.stringify(payload)}::jsonb from account
      returning 1
    )
    select (select count(*) from token)::int as issued, pg_current_xact_id()::text as xact`,
  );
  return rows[0]?.issued === 1 ? { token } : null;
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
 * carried by participant tokens is bumped, and every other link of the account that signs in or
 * changes it is retired (retireAccountLinks).
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

    // Links mailed (or taken) before must not reset the new password again, nor change the address,
    // confirm it or sign in: whoever held the old password may have asked for them.
    await retireAccountLinks(tx, user.id, now);
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
