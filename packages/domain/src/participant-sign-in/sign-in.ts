import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { and, desc, eq, gt, inArray, isNull, lte, sql } from "drizzle-orm";
import {
  otpCodes,
  otpFailedAttempts,
  outgoingMessages,
  passwordResetTokens,
  profiles,
  users,
  type Executor,
} from "@studyflow/db";
import {
  ACCOUNT_TOKEN_PATTERN,
  consumeAccountToken,
  createAccountToken,
  hashAccountToken,
  retireAccountTokens,
} from "../participant-accounts/account-tokens";
import { normalizeEmail } from "../participant-accounts/password-reset";
import {
  checkPasswordRule,
  hashPassword,
  passwordHashNeedsUpgrade,
  verifyPassword,
} from "../participant-accounts/passwords";
import { forgetCached } from "../cache/read-cache";
import { Invalid, RateLimited, Unauthorized } from "../errors";
import type { UserRow } from "../participant-accounts/case-user";
import { blurEmailAddress, mainProfileValues } from "../participant-accounts/main-profile";
import { revokeUserSessions } from "../participant-sessions/session-revocation";

/** One answer for an unknown address and a wrong password (CASE's wording). */
export const INVALID_CREDENTIALS_MESSAGE = "invalid email or password";

/**
 * A hash of no one's password, made with today's parameters on first use: an unknown address is
 * checked against it, so it costs the same argon2 time as a known one and the answer's timing
 * does not tell them apart.
 */
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => (dummyHash ??= hashPassword("studyflow dummy password: never matches"));

/** Statements a sign-in runs on every attempt, prepared once per database (see passwordSignIn). */
function signInStatements(db: Executor) {
  let statements = preparedSignIn.get(db);
  if (!statements) {
    statements = {
      // drizzle's prepared statements are prepared once per connection: one round trip each time,
      // where an unprepared one describes itself first (two)
      userByEmail: db
        .select()
        .from(users)
        .where(eq(users.email, sql.placeholder("email")))
        .limit(1)
        .prepare("sign_in_user_by_email"),
    };
    preparedSignIn.set(db, statements);
  }
  return statements;
}
const preparedSignIn = new WeakMap<
  Executor,
  {
    userByEmail: { execute: (values: { email: string }) => Promise<UserRow[]> };
  }
>();

/**
 * Checks an e-mail and password. Returns the account's row (as read before the check), or null
 * for an unknown address or a wrong password alike (after the same argon2 work). A stored hash
 * made with other parameters (weaker ones, or CASE's) is replaced on success. The row is the whole
 * account, so a sign-in's answer needs no second read of it (the profiles come with the session:
 * openSignInSession).
 */
export async function passwordSignIn(db: Executor, email: string, password: string): Promise<UserRow | null> {
  const [user] = await signInStatements(db).userByEmail.execute({ email: normalizeEmail(email) });
  const matches = await verifyPassword(user?.passwordHash ?? (await dummyPasswordHash()), password).catch(() => false);
  if (!user || !matches) return null;
  if (passwordHashNeedsUpgrade(user.passwordHash)) {
    await db
      .update(users)
      .set({ passwordHash: await hashPassword(password) })
      .where(eq(users.id, user.id));
  }
  return user;
}

/** case-backend's language code rule: "en", "de", "pt-BR", "es-419". */
export const LANGUAGE_CODE_PATTERN = /^[a-z]{2}(-([A-Z]{2}|\d{3}))?$/;

export interface SignUpInput {
  email: string;
  password: string;
  preferredLanguage: string;
  now: Date;
  /** Page of the participant app that takes `?token=` and calls verify-email. */
  verifyEmailUrl: string;
  verifyEmailTtlSeconds: number;
  /** Page where the owner of a taken address can reset the password. */
  passwordResetUrl: string;
  /**
   * Whether the owner of a taken address may be mailed about this attempt: the caller's cap on
   * sign-up mails per recipient, so sign-ups cannot flood a mailbox. A free address gets its
   * account and verify mail regardless. Default true.
   */
  notifyOwner?: boolean;
}

/**
 * Signs up: for a free address creates the account (argon2id hash, a main profile) and mails a
 * verify-email link; for a taken one creates nothing and mails the owner that someone tried
 * (unless `notifyOwner` is false). A taken address sent with its own password (the owner signing
 * up again) also marks the account (`signupRepeatedAt`): the app signs in next and writes a new
 * account's defaults, which must not overwrite the owner's settings (see
 * updateContactPreferences). Both paths cost one argon2 run (a hash of the new password, or its
 * check against the owner's) and one outbox row, so neither the answer nor its time tells which it
 * was; once the caller's cap stops the mails, the address has been tried that often, so it was
 * taken or has been taken by those tries. Returns whether an account was created (for tests and
 * logs only: never for the answer).
 * @throws Invalid naming `password` or `preferredLanguage` when they break the rules.
 */
export async function signUp(db: Executor, input: SignUpInput): Promise<{ created: boolean }> {
  const violation = checkPasswordRule(input.password);
  if (violation) throw new Invalid(violation);
  if (!LANGUAGE_CODE_PATTERN.test(input.preferredLanguage)) {
    throw new Invalid("preferredLanguage: must be a language code such as en, de or pt-BR");
  }
  const email = normalizeEmail(input.email);
  const [owner] = await db
    .select({ id: users.id, passwordHash: users.passwordHash, language: users.preferredLanguage })
    .from(users)
    .where(eq(users.email, email))
    .limit(1);
  if (owner) {
    const ownPassword = await verifyPassword(owner.passwordHash, input.password).catch(() => false);
    return db.transaction(async (tx) => {
      if (ownPassword) await tx.update(users).set({ signupRepeatedAt: input.now }).where(eq(users.id, owner.id));
      await notifyOwnerOfSignup(tx, input, email);
      return { created: false };
    });
  }
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [created] = await tx
      .insert(users)
      .values({ email, passwordHash, preferredLanguage: input.preferredLanguage, passwordChangedAt: input.now })
      .onConflictDoNothing({ target: users.email })
      .returning({ id: users.id });
    if (!created) {
      // taken since the read above, by a sign-up at the same moment: no one's settings to keep yet
      await notifyOwnerOfSignup(tx, input, email);
      return { created: false };
    }
    await tx.insert(profiles).values(mainProfileValues(created.id, email, input.now));
    await mailVerifyEmail(tx, {
      userId: created.id,
      email,
      language: input.preferredLanguage,
      now: input.now,
      url: input.verifyEmailUrl,
      ttlSeconds: input.verifyEmailTtlSeconds,
    });
    return { created: true };
  });
}

/** The owner of a taken address is told someone signed up with it, within the caller's mail cap. */
async function notifyOwnerOfSignup(tx: Executor, input: SignUpInput, email: string): Promise<void> {
  if (input.notifyOwner === false) return;
  const [owner] = await tx
    .select({ id: users.id, language: users.preferredLanguage })
    .from(users)
    .where(eq(users.email, email))
    .limit(1);
  await tx.insert(outgoingMessages).values({
    template: "signup-attempt",
    toAddress: email,
    userId: owner?.id ?? null,
    language: owner?.language ?? input.preferredLanguage,
    payload: { resetUrl: input.passwordResetUrl },
  });
}

interface VerifyMail {
  userId: string;
  email: string;
  language: string;
  now: Date;
  url: string;
  ttlSeconds: number;
}

async function mailVerifyEmail(db: Executor, mail: VerifyMail): Promise<void> {
  const token = await createAccountToken(db, {
    userId: mail.userId,
    purpose: "verify-email",
    ttlSeconds: mail.ttlSeconds,
    now: mail.now,
    info: { email: mail.email },
  });
  const link = new URL(mail.url);
  link.searchParams.set("token", token);
  await db.insert(outgoingMessages).values({
    template: "verify-email",
    toAddress: mail.email,
    userId: mail.userId,
    language: mail.language,
    // the resend cool-down counts from here, on the caller's clock
    createdAt: mail.now,
    payload: { verifyUrl: link.toString(), validForHours: Math.round(mail.ttlSeconds / 360) / 10 },
  });
}

/** Between two verification mails to one account (case-backend waits 60 s). */
export const VERIFICATION_MAIL_COOLDOWN_SECONDS = 60;

/**
 * Mails a new verify-email link to the account's address (CASE's resend-email-verification).
 * Earlier links stop working. @throws Invalid when `email` is not the account's address,
 * RateLimited within the cool-down.
 */
export async function resendEmailVerification(
  db: Executor,
  input: { userId: string; email: string; now: Date; url: string; ttlSeconds: number },
): Promise<void> {
  await db.transaction(async (tx) => {
    const [user] = await tx
      .select({ email: users.email, language: users.preferredLanguage })
      .from(users)
      .where(eq(users.id, input.userId))
      .limit(1)
      .for("update");
    if (!user || user.email !== normalizeEmail(input.email)) throw new Invalid("email: not an address of this account");
    const [last] = await tx
      .select({ at: outgoingMessages.createdAt })
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.userId, input.userId), eq(outgoingMessages.template, "verify-email")))
      .orderBy(desc(outgoingMessages.createdAt))
      .limit(1);
    const waited = last ? (input.now.getTime() - last.at.getTime()) / 1000 : Infinity;
    if (waited < VERIFICATION_MAIL_COOLDOWN_SECONDS) {
      throw new RateLimited("try again later", Math.ceil(VERIFICATION_MAIL_COOLDOWN_SECONDS - waited));
    }
    await retireAccountTokens(tx, input.userId, ["verify-email"], input.now);
    await mailVerifyEmail(tx, {
      userId: input.userId,
      email: user.email,
      language: user.language,
      now: input.now,
      url: input.url,
      ttlSeconds: input.ttlSeconds,
    });
  });
}

export const INVALID_VERIFICATION_TOKEN_MESSAGE = "invalid or expired verification token";

/** How long a used verify-email link still signs in (login-with-temptoken), as case-backend keeps it. */
export const VERIFY_LINK_AFTER_USE_SECONDS = 60 * 60;

/**
 * How long after its use a verify-email link is answered again as it was the first time: the
 * participant app's verification page confirms on every render of its server component, and
 * renders two or three times within a second or two of the first (once more after the automatic
 * sign-in). A repeat changes nothing; past this window the used link is refused like an unknown one.
 */
export const VERIFY_LINK_REPEAT_SECONDS = 2 * 60;

/** What a used verification link confirmed: the account and its address, now confirmed. */
export interface VerifiedAddress {
  userId: string;
  email: string;
  accountConfirmedAt: Date;
}

/**
 * Confirms an address with a mailed token, which is spent: a link confirms once, and a used,
 * retired, expired or unknown one is refused alike (a verify-email link repeated within
 * VERIFY_LINK_REPEAT_SECONDS of its use answers as the first time did, writing nothing). "verify-email": the account's address (still
 * the one mailed) is confirmed; the link still signs in through login-with-temptoken for
 * VERIFY_LINK_AFTER_USE_SECONDS (the participant app does that right after), never longer than it
 * was valid. "change-email": the account's address becomes `info.newEmail` if no other account has
 * it meanwhile, confirmed (a main profile named by the old address's blur is renamed by the new
 * one's); other sessions end and the old address gets a notice.
 * @throws Unauthorized for unknown, used, expired tokens, or ones that no longer fit the account.
 */
export async function verifyEmailToken(db: Executor, token: string, now: Date): Promise<VerifiedAddress> {
  const verified = await db.transaction(async (tx): Promise<VerifiedAddress | null> => {
    // Of concurrent requests holding the link exactly one gets it.
    const holder = await consumeAccountToken(tx, token, ["verify-email", "change-email"], now);
    if (!holder) return repeatedVerification(tx, token, now);
    const [user] = await tx
      .select({ email: users.email, language: users.preferredLanguage, confirmedAt: users.accountConfirmedAt })
      .from(users)
      .where(eq(users.id, holder.userId))
      .limit(1)
      .for("update");
    if (!user) return null;
    if (holder.purpose === "verify-email") {
      // a link to an address the account no longer has proves nothing about today's
      if (holder.info.email !== undefined && holder.info.email !== user.email) return null;
      const inAnHour = new Date(now.getTime() + VERIFY_LINK_AFTER_USE_SECONDS * 1000);
      if (holder.expiresAt > inAnHour) {
        await tx.update(passwordResetTokens).set({ expiresAt: inAnHour }).where(eq(passwordResetTokens.id, holder.id));
      }
      const confirmedAt = user.confirmedAt ?? now;
      if (!user.confirmedAt) await tx.update(users).set({ accountConfirmedAt: now }).where(eq(users.id, holder.userId));
      return { userId: holder.userId, email: user.email, accountConfirmedAt: confirmedAt };
    }
    const newEmail = holder.info.newEmail ? normalizeEmail(holder.info.newEmail) : "";
    if (newEmail === "") return null;
    const [taken] = await tx.select({ id: users.id }).from(users).where(eq(users.email, newEmail)).limit(1);
    if (taken && taken.id !== holder.userId) return null;
    await tx.update(users).set({ email: newEmail, accountConfirmedAt: now }).where(eq(users.id, holder.userId));
    // as case-backend: a main profile still named by the old address's blur is named by the new one's
    await tx
      .update(profiles)
      .set({ alias: blurEmailAddress(newEmail) })
      .where(
        and(
          eq(profiles.userId, holder.userId),
          eq(profiles.mainProfile, true),
          eq(profiles.alias, blurEmailAddress(user.email)),
        ),
      );
    // the other change-email links (and old verify links) end with the old address
    await retireAccountTokens(tx, holder.userId, ["change-email", "verify-email", "password-reset"], now);
    await revokeUserSessions(tx, holder.userId, "email-change", { now });
    await tx.insert(outgoingMessages).values({
      template: "email-changed",
      toAddress: user.email,
      userId: holder.userId,
      language: user.language,
      payload: { newEmail },
    });
    return { userId: holder.userId, email: newEmail, accountConfirmedAt: now };
  });
  if (!verified) throw new Unauthorized(INVALID_VERIFICATION_TOKEN_MESSAGE);
  forgetCached(db, "user", verified.userId);
  return verified;
}

/**
 * A verify-email link used less than VERIFY_LINK_REPEAT_SECONDS ago, whose address is still the
 * account's and confirmed: answered as its first use was, writing nothing. Retired links (a reset,
 * a password or address change) have expired and never repeat.
 */
async function repeatedVerification(tx: Executor, token: string, now: Date): Promise<VerifiedAddress | null> {
  if (!ACCOUNT_TOKEN_PATTERN.test(token)) return null;
  const [row] = await tx
    .select({
      userId: users.id,
      email: users.email,
      confirmedAt: users.accountConfirmedAt,
      info: passwordResetTokens.info,
    })
    .from(passwordResetTokens)
    .innerJoin(users, eq(users.id, passwordResetTokens.userId))
    .where(
      and(
        eq(passwordResetTokens.tokenHash, hashAccountToken(token)),
        eq(passwordResetTokens.purpose, "verify-email"),
        gt(passwordResetTokens.usedAt, new Date(now.getTime() - VERIFY_LINK_REPEAT_SECONDS * 1000)),
        gt(passwordResetTokens.expiresAt, now),
      ),
    )
    .limit(1);
  if (!row?.confirmedAt) return null;
  if (row.info.email !== undefined && row.info.email !== row.email) return null;
  return { userId: row.userId, email: row.email, accountConfirmedAt: row.confirmedAt };
}

/** A code lives 10 minutes: long enough to switch to the mailbox and back, short for a 6-digit secret. */
export const OTP_TTL_SECONDS = 10 * 60;
/**
 * Codes mailed to one account within OTP_SEND_WINDOW_SECONDS (case-backend: 10 unexpired codes, a
 * code living 15 minutes). The participant app asks twice per sign-in (the second is answered
 * without a mail, see OTP_REPEAT_SECONDS), so this leaves room for several sign-ins and "send the
 * code again" clicks, while bounding the open codes a guess is compared with: with codes living
 * OTP_TTL_SECONDS, at most OTP_MAX_SENDS are open at once.
 */
export const OTP_MAX_SENDS = 10;
export const OTP_SEND_WINDOW_SECONDS = 15 * 60;
/**
 * A request this soon after the last code, while that code is open, is answered as sent and mails
 * nothing (case-backend's 30 s): the app's code page is rendered twice per visit and asks each time.
 */
export const OTP_REPEAT_SECONDS = 30;
/**
 * Wrong codes per account within OTP_ATTEMPT_WINDOW_SECONDS, over all its codes: the last one ends
 * every open code, and until the oldest of them leaves the window no code is checked or sent.
 * A guess is compared with at most OTP_MAX_SENDS open codes, so a 6-digit code falls to guessing
 * with a chance of at most 5 × 10 in a million per window. (case-backend: 3 per 5 minutes.)
 */
export const OTP_MAX_FAILED_ATTEMPTS = 5;
export const OTP_ATTEMPT_WINDOW_SECONDS = 15 * 60;
export const INVALID_OTP_MESSAGE = "invalid or expired code";

/** "try again in 7 minutes": the participant app shows a refusal's error text on its code page. */
export function tryAgainIn(seconds: number): string {
  if (seconds < 60) return `try again in ${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `try again in ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

const hashOtp = (userId: string, code: string) =>
  createHash("sha256").update(`${userId}:${code}`, "utf8").digest("hex");

/** Whole seconds (at least 1) until `since` is `windowSeconds` old. */
const secondsUntilOutOf = (since: Date, windowSeconds: number, now: Date) =>
  Math.max(1, Math.ceil((since.getTime() + windowSeconds * 1000 - now.getTime()) / 1000));

/**
 * Locks the account's row (so its code requests and checks run one at a time) and refuses while
 * its wrong codes within the attempt window are used up.
 * @throws Unauthorized when the account no longer exists, RateLimited while the attempts are used up.
 */
async function lockAccountForCodes(tx: Executor, userId: string, now: Date) {
  const [user] = await tx
    .select({ email: users.email, language: users.preferredLanguage })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1)
    .for("update");
  if (!user) throw new Unauthorized("account no longer exists");
  const failures = await tx
    .select({ at: otpFailedAttempts.at })
    .from(otpFailedAttempts)
    .where(
      and(
        eq(otpFailedAttempts.userId, userId),
        gt(otpFailedAttempts.at, new Date(now.getTime() - OTP_ATTEMPT_WINDOW_SECONDS * 1000)),
      ),
    )
    .orderBy(desc(otpFailedAttempts.at))
    .limit(OTP_MAX_FAILED_ATTEMPTS);
  if (failures.length >= OTP_MAX_FAILED_ATTEMPTS) {
    // the window has room again once the oldest of the last OTP_MAX_FAILED_ATTEMPTS leaves it
    const retryAfter = secondsUntilOutOf(failures[failures.length - 1]!.at, OTP_ATTEMPT_WINDOW_SECONDS, now);
    throw new RateLimited(`too many wrong codes: ${tryAgainIn(retryAfter)}`, retryAfter);
  }
  return { user, failures: failures.length };
}

/**
 * Mails a new 6-digit code (CASE's GET /v1/auth/otp?type=email). Older open codes keep working
 * until they expire, as case-backend's do. A request within OTP_REPEAT_SECONDS of the last code,
 * while it is open, sends nothing (`sent: false`): the caller answers as if it had.
 * @throws RateLimited after OTP_MAX_SENDS codes within the send window, or while the account's
 * wrong codes are used up (a code could not be checked).
 */
export async function sendEmailOtp(
  db: Executor,
  input: { userId: string; sessionId: string | undefined; now: Date },
): Promise<{ sent: true; code: string } | { sent: false }> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  return db.transaction(async (tx) => {
    const { user } = await lockAccountForCodes(tx, input.userId, input.now);
    const windowStart = new Date(input.now.getTime() - OTP_SEND_WINDOW_SECONDS * 1000);
    const recent = await tx
      .select({ createdAt: otpCodes.createdAt, expiresAt: otpCodes.expiresAt, usedAt: otpCodes.usedAt })
      .from(otpCodes)
      .where(and(eq(otpCodes.userId, input.userId), gt(otpCodes.createdAt, windowStart)))
      .orderBy(desc(otpCodes.createdAt))
      .limit(OTP_MAX_SENDS);
    const last = recent[0];
    if (
      last &&
      last.usedAt === null &&
      last.expiresAt > input.now &&
      input.now.getTime() - last.createdAt.getTime() < OTP_REPEAT_SECONDS * 1000
    ) {
      return { sent: false as const };
    }
    if (recent.length >= OTP_MAX_SENDS) {
      const retryAfter = secondsUntilOutOf(recent[recent.length - 1]!.createdAt, OTP_SEND_WINDOW_SECONDS, input.now);
      throw new RateLimited(`too many codes requested: ${tryAgainIn(retryAfter)}`, retryAfter);
    }
    await tx.insert(otpCodes).values({
      userId: input.userId,
      sessionId: input.sessionId ?? null,
      type: "email",
      codeHash: hashOtp(input.userId, code),
      createdAt: input.now,
      expiresAt: new Date(input.now.getTime() + OTP_TTL_SECONDS * 1000),
    });
    await tx.insert(outgoingMessages).values({
      template: "otp-code",
      toAddress: user.email,
      userId: input.userId,
      language: user.language,
      payload: { code, validForMinutes: OTP_TTL_SECONDS / 60 },
      expiresAt: new Date(input.now.getTime() + OTP_TTL_SECONDS * 1000),
    });
    return { sent: true as const, code };
  });
}

/**
 * Checks a code against the account's open ones (unexpired, unspent: at most OTP_MAX_SENDS). A
 * right one spends every open code and, since it proves the mailbox, confirms the account's
 * address. A wrong one is counted against the account, whichever codes are open, and the
 * OTP_MAX_FAILED_ATTEMPTS-th within the window ends them all. A check with no open code is refused
 * without counting: it guesses nothing.
 * @throws Unauthorized({@link INVALID_OTP_MESSAGE}); RateLimited while the wrong codes are used up
 * (nothing is checked or written then).
 */
export async function verifyEmailOtp(db: Executor, input: { userId: string; code: string; now: Date }): Promise<void> {
  const code = input.code.trim();
  const outcome = await db.transaction(async (tx) => {
    const { failures } = await lockAccountForCodes(tx, input.userId, input.now);
    const open = await tx
      .select({ id: otpCodes.id, codeHash: otpCodes.codeHash })
      .from(otpCodes)
      .where(and(eq(otpCodes.userId, input.userId), isNull(otpCodes.usedAt), gt(otpCodes.expiresAt, input.now)));
    if (open.length === 0) return "none" as const;
    const ids = open.map((row) => row.id);
    const given = Buffer.from(hashOtp(input.userId, code), "hex");
    // every open code is compared (no early exit), each in constant time
    const matches = open.filter((row) => timingSafeEqual(Buffer.from(row.codeHash, "hex"), given)).length > 0;
    if (/^\d{6}$/.test(code) && matches) {
      await tx.update(otpCodes).set({ usedAt: input.now }).where(inArray(otpCodes.id, ids));
      await tx
        .update(users)
        .set({
          accountConfirmedAt: sql`coalesce(${users.accountConfirmedAt}, ${input.now.toISOString()}::timestamptz)`,
        })
        .where(eq(users.id, input.userId));
      return "ok" as const;
    }
    // failures older than the window count for nothing any more
    await tx
      .delete(otpFailedAttempts)
      .where(
        and(
          eq(otpFailedAttempts.userId, input.userId),
          lte(otpFailedAttempts.at, new Date(input.now.getTime() - OTP_ATTEMPT_WINDOW_SECONDS * 1000)),
        ),
      );
    await tx.insert(otpFailedAttempts).values({ userId: input.userId, at: input.now });
    if (failures + 1 >= OTP_MAX_FAILED_ATTEMPTS) {
      await tx.update(otpCodes).set({ usedAt: input.now }).where(inArray(otpCodes.id, ids));
    }
    return "wrong" as const;
  });
  if (outcome !== "ok") throw new Unauthorized(INVALID_OTP_MESSAGE);
}

export const INVALID_TEMP_TOKEN_MESSAGE = "invalid token";
