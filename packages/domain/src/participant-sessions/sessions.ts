import { createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import {
  CACHE_CHANNEL,
  rawClientOf,
  participantSessions,
  refreshTokens,
  users,
  type Database,
  type Executor,
  type profiles,
} from "@studyflow/db";
import { mintParticipantToken } from "../access/tokens";
import { forgetCached, readCacheOf } from "../cache/read-cache";
import { Unauthorized } from "../errors";

/** Why sessions ended, as their rows record it. */
export type SessionRevocationReason =
  | "logout"
  | "refresh-reuse"
  | "password-change"
  | "password-reset"
  | "email-change"
  | "operator"
  | "account-locked"
  | "account-deleted"
  | "profile-removed"
  | "tokens-revoked";

/** How long tokens and sessions live; the API takes them from its configuration. */
export interface SessionTokenSettings {
  /** HS256 key of participant tokens. */
  secret: string;
  /** Lifetime of an access token. */
  accessTokenTtlSeconds: number;
  /** Lifetime of one refresh token (each renewal issues a new one). */
  refreshTokenTtlSeconds: number;
  /** Absolute end of a session counted from sign-in, however often it is renewed. */
  sessionMaxAgeSeconds: number;
  /**
   * How long a just-spent refresh token still renews: a client that renews from two tabs (or
   * retries after a lost answer) must not be taken for a thief, as case-backend's NextToken allows.
   * Within it the spent token answers its one successor again, never a new one.
   */
  refreshGraceSeconds: number;
}

/** A fresh token pair of a session and what CASE's token envelope says about it. */
export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  /** Access token lifetime in seconds (CASE's `expiresIn`). */
  expiresIn: number;
  sessionId: string;
  /** The profile the session acts for by default (the main profile); "" when the user has none. */
  selectedProfileId: string;
  /** When an e-mail OTP was last verified in this session (CASE's `lastOTP.email`). */
  lastEmailOtpAt: Date | null;
  userId: string;
}

/** One neutral message for locked accounts, accounts being deleted and vanished ones. */
export const ACCOUNT_UNAVAILABLE_MESSAGE = "sign-in is not possible for this account";
export const SESSION_ENDED_MESSAGE = "session ended: sign in again";
export const INVALID_REFRESH_TOKEN_MESSAGE = "invalid or expired refresh token";
export const REFRESH_TOKEN_REUSED_MESSAGE = "refresh token already used: session ended, sign in again";

/** 256 random bits; stored only as SHA-256 (a table leak gives no usable token). */
const REFRESH_TOKEN_BYTES = 32;
const REFRESH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const hashRefreshToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

const newRefreshToken = () => randomBytes(REFRESH_TOKEN_BYTES).toString("base64url");

/**
 * The one successor of a refresh token: an HMAC of the spent token under a key derived from the
 * participant token secret. Only hashes are stored, so this is what lets a renewal repeated within
 * the grace (a lost answer, a second tab) answer the very successor the first one issued, without
 * keeping any token readable: computing it takes the spent token itself and the server's secret.
 * 256 bits, as unguessable as a random token to anyone without both.
 */
function successorRefreshToken(spentToken: string, secret: string): string {
  const key = Buffer.from(hkdfSync("sha256", secret, "", "studyflow refresh-token successor", REFRESH_TOKEN_BYTES));
  return createHmac("sha256", key).update(spentToken, "utf8").digest("base64url");
}

const addSeconds = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);
const earlier = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);

interface SignInAccount {
  tokenVersion: number;
  lockedAt: Date | null;
  deletionRequestedAt: Date | null;
}

async function signInAccount(db: Executor, userId: string): Promise<SignInAccount> {
  const [account] = await db
    .select({
      tokenVersion: users.tokenVersion,
      lockedAt: users.lockedAt,
      deletionRequestedAt: users.deletionRequestedAt,
    })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  if (!account || account.lockedAt !== null || account.deletionRequestedAt !== null) {
    throw new Unauthorized(ACCOUNT_UNAVAILABLE_MESSAGE);
  }
  return account;
}

async function insertRefreshToken(
  db: Executor,
  sessionId: string,
  expiresAt: Date,
  token: string = newRefreshToken(),
): Promise<{ id: string; token: string }> {
  const [row] = await db
    .insert(refreshTokens)
    .values({ sessionId, tokenHash: hashRefreshToken(token), expiresAt })
    .returning({ id: refreshTokens.id });
  return { id: row!.id, token };
}

export interface IssueSessionTokensInput {
  userId: string;
  now: Date;
  settings: SessionTokenSettings;
  /**
   * Continue this session of the user (a verified OTP, a re-authentication) instead of opening a
   * new one: it must be open. Without it a new session starts (a sign-in).
   */
  sessionId?: string;
  /** Record an e-mail OTP verified now (or at this time) in the session. */
  lastEmailOtpAt?: Date;
  /**
   * The owner proved it at this time with the password or an e-mail OTP code: re-authentication
   * (account deletion) counts it. Left out for a mailed link (login-with-temptoken): holding a
   * link is not knowing the password.
   */
  identityProvenAt?: Date;
}

/**
 * Issues a token pair for a user: opens a session (or continues an open one) and its refresh
 * token in one transaction, then signs an access token carrying the session (`sid`) and the
 * user's token version. Locked accounts and accounts being deleted get
 * Unauthorized({@link ACCOUNT_UNAVAILABLE_MESSAGE}). Passwords, OTPs and the like are the
 * caller's to check first.
 */
export async function issueSessionTokens(db: Executor, input: IssueSessionTokensInput): Promise<SessionTokens> {
  const { userId, now, settings } = input;
  if (input.sessionId === undefined) return openSession(db, input);
  const sessionId = input.sessionId;
  if (!UUID_PATTERN.test(sessionId)) throw new Unauthorized(SESSION_ENDED_MESSAGE);
  const issued = await db.transaction(async (tx) => {
    const account = await signInAccount(tx, userId);
    const [continued] = await tx
      .update(participantSessions)
      .set({
        lastUsedAt: now,
        ...(input.lastEmailOtpAt ? { lastEmailOtpAt: input.lastEmailOtpAt } : {}),
        ...(input.identityProvenAt ? { identityProvenAt: input.identityProvenAt } : {}),
      })
      .where(
        and(
          eq(participantSessions.id, sessionId),
          eq(participantSessions.userId, userId),
          isNull(participantSessions.revokedAt),
          gt(participantSessions.expiresAt, now),
        ),
      )
      .returning({
        id: participantSessions.id,
        selectedProfileId: participantSessions.selectedProfileId,
        lastEmailOtpAt: participantSessions.lastEmailOtpAt,
        expiresAt: participantSessions.expiresAt,
      });
    if (!continued) throw new Unauthorized(SESSION_ENDED_MESSAGE);
    const refresh = await insertRefreshToken(
      tx,
      continued.id,
      earlier(addSeconds(now, settings.refreshTokenTtlSeconds), continued.expiresAt),
    );
    return { session: continued, refreshToken: refresh.token, tokenVersion: account.tokenVersion };
  });
  return tokensOf(userId, issued.session, issued.refreshToken, issued.tokenVersion, now, settings);
}

/**
 * A sign-in's session in one prepared statement (one round trip, atomic as a statement is): the
 * account is checked and its last login set, the session opened with the main profile selected,
 * and its first refresh token stored. Sign-ins are argon2-bound; this keeps the rest of their
 * work from adding several round trips of a transaction to each (apps/api/bench/sign-in-bench.ts).
 */
async function openSession(db: Executor, input: IssueSessionTokensInput): Promise<SessionTokens> {
  return (await openSessionReading(db, input, false)).tokens;
}

/** A profile of the account as a sign-in's answer shows it (the profiles table's row). */
export type SignInProfile = typeof profiles.$inferSelect;

/**
 * A password sign-in's new session (as issueSessionTokens opens one) and the account's profiles
 * by creation, read by the same statement: the answer needs them, and a statement of their own
 * cost the sign-in a round trip's work on the event loop, which argon2 shares with it.
 */
export async function openSignInSession(
  db: Database,
  input: Omit<IssueSessionTokensInput, "sessionId">,
): Promise<{ tokens: SessionTokens; profiles: SignInProfile[] }> {
  // its commit is not waited for (see openSessionReading): never inside a caller's transaction
  if (db instanceof PgTransaction) throw new Error("openSignInSession: run it on the pool, not in a transaction");
  const opened = await openSessionReading(db, input, true);
  return { tokens: opened.tokens, profiles: opened.profiles ?? [] };
}

/** A profile as the session statement reads it: json_build_object's keys, timestamps as ISO text. */
interface ProfileJson {
  id: string;
  userId: string;
  alias: string;
  mainProfile: boolean;
  avatarId: string;
  consentConfirmedAt: string | null;
  createdAt: string;
}

async function openSessionReading(
  db: Executor,
  input: IssueSessionTokensInput,
  withProfiles: boolean,
): Promise<{ tokens: SessionTokens; profiles: SignInProfile[] | undefined }> {
  const { userId, now, settings } = input;
  if (!UUID_PATTERN.test(userId)) throw new Unauthorized(ACCOUNT_UNAVAILABLE_MESSAGE);
  const refreshToken = newRefreshToken();
  const sessionEnds = addSeconds(now, settings.sessionMaxAgeSeconds);
  const refreshEnds = earlier(addSeconds(now, settings.refreshTokenTtlSeconds), sessionEnds);
  const at = now.toISOString();
  const otpAt = input.lastEmailOtpAt?.toISOString() ?? null;
  const provenAt = input.identityProvenAt?.toISOString() ?? null;
  // postgres.js's own tagged statement: prepared once per connection (one text with the profiles,
  // one without), and no drizzle SQL to build and render on every sign-in
  const client = rawClientOf(db);
  // A password sign-in's statement is its own transaction, and its commit is not waited for:
  // `synchronous_commit` off for this transaction only (set_config's `true`: it ends with the
  // statement's implicit transaction, so nothing else on the connection runs without the wait). The
  // commit flush was the larger part of the statement's PostgreSQL work, on the cores argon2 needs.
  // What a database crash can lose is the last few hundred milliseconds (wal_writer_delay, 3 × at
  // most) of sign-ins: their sessions, refresh tokens and last-login times. Those participants sign
  // in again. Nothing else is written this way: no response, no participant state
  // (docs/faults-and-scaling.md).
  const profilesColumn = withProfiles
    ? client`, (
        select coalesce(json_agg(json_build_object(
          'id', p.id, 'userId', p.user_id, 'alias', p.alias, 'mainProfile', p.main_profile, 'avatarId', p.avatar_id,
          'consentConfirmedAt', p.consent_confirmed_at, 'createdAt', p.created_at) order by p.created_at), '[]'::json)
        from profiles p where p.user_id = ${userId}::uuid
      ) as profiles, set_config('synchronous_commit', 'off', true) as commit_unwaited`
    : client``;
  const [row] = await client<
    {
      token_version: number;
      session_id: string;
      selected_profile_id: string | null;
      profiles?: ProfileJson[];
    }[]
  >`with account as (
      update users set last_login_at = ${at}::timestamptz
      where id = ${userId}::uuid and locked_at is null and deletion_requested_at is null
      returning token_version
    ), session as (
      insert into participant_sessions
        (user_id, selected_profile_id, last_email_otp_at, identity_proven_at, last_used_at, expires_at)
      select ${userId}::uuid,
        (select p.id from profiles p where p.user_id = ${userId}::uuid and p.main_profile order by p.created_at limit 1),
        ${otpAt}::timestamptz, ${provenAt}::timestamptz, ${at}::timestamptz, ${sessionEnds.toISOString()}::timestamptz
      from account
      returning id, selected_profile_id
    ), refresh as (
      insert into refresh_tokens (session_id, token_hash, expires_at)
      select id, ${hashRefreshToken(refreshToken)}, ${refreshEnds.toISOString()}::timestamptz from session
      returning id
    )
    select account.token_version, session.id as session_id, session.selected_profile_id ${profilesColumn}
    from account, session, refresh`;
  if (!row) throw new Unauthorized(ACCOUNT_UNAVAILABLE_MESSAGE);
  const tokens = await tokensOf(
    userId,
    { id: row.session_id, selectedProfileId: row.selected_profile_id, lastEmailOtpAt: input.lastEmailOtpAt ?? null },
    refreshToken,
    row.token_version,
    now,
    settings,
  );
  const profileRows = row.profiles?.map((profile) => ({
    ...profile,
    consentConfirmedAt: profile.consentConfirmedAt === null ? null : new Date(profile.consentConfirmedAt),
    createdAt: new Date(profile.createdAt),
  }));
  return { tokens, profiles: profileRows };
}

async function tokensOf(
  userId: string,
  session: { id: string; selectedProfileId: string | null; lastEmailOtpAt: Date | null },
  refreshToken: string,
  tokenVersion: number,
  now: Date,
  settings: SessionTokenSettings,
): Promise<SessionTokens> {
  const accessToken = await mintParticipantToken({
    userId,
    tokenVersion,
    secret: settings.secret,
    ttlSeconds: settings.accessTokenTtlSeconds,
    now: now.getTime(),
    sessionId: session.id,
  });
  return {
    accessToken,
    refreshToken,
    expiresIn: settings.accessTokenTtlSeconds,
    sessionId: session.id,
    selectedProfileId: session.selectedProfileId ?? "",
    lastEmailOtpAt: session.lastEmailOtpAt,
    userId,
  };
}

export interface RenewSessionTokensInput {
  /** Subject and session of the (possibly expired) access token whose signature was verified. */
  userId: string;
  sessionId: string;
  refreshToken: string;
  now: Date;
  settings: SessionTokenSettings;
}

/**
 * Renews a session's token pair with a refresh token: the token is spent and its one successor
 * issued in one transaction (rotation on every use). A token spent less than `refreshGraceSeconds`
 * ago answers that same successor again, with a new access token of the session (concurrent
 * renewals, a retry after a lost answer), while the successor is unspent: a spent token never
 * yields a second live refresh token. Presented after the grace, or after its successor was spent
 * in turn, it is a reuse, which revokes the whole session and answers
 * Unauthorized({@link REFRESH_TOKEN_REUSED_MESSAGE}). Unknown, expired or foreign tokens, ended
 * sessions and unavailable accounts answer Unauthorized too.
 */
export async function renewSessionTokens(db: Executor, input: RenewSessionTokensInput): Promise<SessionTokens> {
  const { now, settings } = input;
  if (!REFRESH_TOKEN_PATTERN.test(input.refreshToken) || !UUID_PATTERN.test(input.sessionId)) {
    throw new Unauthorized(INVALID_REFRESH_TOKEN_MESSAGE);
  }
  const successorToken = successorRefreshToken(input.refreshToken, settings.secret);
  const outcome = await db.transaction(async (tx) => {
    // The row lock orders concurrent renewals of one token: the second sees it spent.
    const [found] = await tx
      .select({
        id: refreshTokens.id,
        expiresAt: refreshTokens.expiresAt,
        usedAt: refreshTokens.usedAt,
        replacedBy: refreshTokens.replacedBy,
        sessionId: participantSessions.id,
        userId: participantSessions.userId,
        selectedProfileId: participantSessions.selectedProfileId,
        lastEmailOtpAt: participantSessions.lastEmailOtpAt,
        sessionExpiresAt: participantSessions.expiresAt,
        revokedAt: participantSessions.revokedAt,
      })
      .from(refreshTokens)
      .innerJoin(participantSessions, eq(participantSessions.id, refreshTokens.sessionId))
      .where(eq(refreshTokens.tokenHash, hashRefreshToken(input.refreshToken)))
      .limit(1)
      .for("update", { of: refreshTokens });
    // A refresh token only renews the session (and user) its access token names.
    if (!found || found.sessionId !== input.sessionId || found.userId !== input.userId) {
      return { kind: "refused", message: INVALID_REFRESH_TOKEN_MESSAGE } as const;
    }
    if (found.revokedAt !== null || found.sessionExpiresAt.getTime() <= now.getTime()) {
      return { kind: "refused", message: SESSION_ENDED_MESSAGE } as const;
    }
    if (found.usedAt !== null && now.getTime() - found.usedAt.getTime() > settings.refreshGraceSeconds * 1000) {
      await revokeSession(tx, found.sessionId, "refresh-reuse", now);
      return { kind: "reused" } as const;
    }
    if (found.expiresAt.getTime() <= now.getTime()) {
      return { kind: "refused", message: INVALID_REFRESH_TOKEN_MESSAGE } as const;
    }
    const account = await signInAccount(tx, found.userId);
    if (found.usedAt === null) {
      const successor = await insertRefreshToken(
        tx,
        found.sessionId,
        earlier(addSeconds(now, settings.refreshTokenTtlSeconds), found.sessionExpiresAt),
        successorToken,
      );
      await tx
        .update(refreshTokens)
        .set({ usedAt: now, replacedBy: successor.id })
        .where(eq(refreshTokens.id, found.id));
    } else {
      // Within the grace: the successor the first renewal issued, if it is still the live one.
      const [issued] = found.replacedBy
        ? await tx
            .select({ tokenHash: refreshTokens.tokenHash, usedAt: refreshTokens.usedAt })
            .from(refreshTokens)
            .where(eq(refreshTokens.id, found.replacedBy))
            .limit(1)
            .for("update")
        : [];
      // A successor issued otherwise (before successors were derived, or under another secret)
      // cannot be given again: refused, the session goes on with whoever holds it.
      if (!issued || issued.tokenHash !== hashRefreshToken(successorToken)) {
        return { kind: "refused", message: INVALID_REFRESH_TOKEN_MESSAGE } as const;
      }
      // The successor renewed already: the family moved on without this caller, so it is a reuse.
      if (issued.usedAt !== null) {
        await revokeSession(tx, found.sessionId, "refresh-reuse", now);
        return { kind: "reused" } as const;
      }
    }
    await tx.update(participantSessions).set({ lastUsedAt: now }).where(eq(participantSessions.id, found.sessionId));
    return {
      kind: "renewed",
      session: {
        id: found.sessionId,
        selectedProfileId: found.selectedProfileId,
        lastEmailOtpAt: found.lastEmailOtpAt,
      },
      refreshToken: successorToken,
      tokenVersion: account.tokenVersion,
    } as const;
  });
  // Refusals are thrown after the transaction: the revocation of a reused family must commit.
  if (outcome.kind === "reused") throw new Unauthorized(REFRESH_TOKEN_REUSED_MESSAGE);
  if (outcome.kind === "refused") throw new Unauthorized(outcome.message);
  return tokensOf(input.userId, outcome.session, outcome.refreshToken, outcome.tokenVersion, now, settings);
}

/**
 * Tells every API process that these sessions changed, when the surrounding transaction commits
 * (NOTIFY is transactional), and forgets them here at once. Sessions have no trigger of their
 * own: every revocation goes through this module or revokeUserSessions, which call this.
 */
export async function announceSessionChanges(db: Executor, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await db.execute(
    sql`select pg_notify(${CACHE_CHANNEL}, 'session:' || id) from unnest(string_to_array(${sessionIds.join(",")}, ',')) as id`,
  );
  for (const id of sessionIds) forgetCached(db, "session", id);
}

/** Ends one session: its refresh tokens stop renewing and its access tokens are refused at once. */
export async function revokeSession(
  db: Executor,
  sessionId: string,
  reason: SessionRevocationReason,
  now: Date,
): Promise<boolean> {
  if (!UUID_PATTERN.test(sessionId)) return false;
  const revoked = await db
    .update(participantSessions)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(participantSessions.id, sessionId), isNull(participantSessions.revokedAt)))
    .returning({ id: participantSessions.id });
  await announceSessionChanges(
    db,
    revoked.map((row) => row.id),
  );
  return revoked.length > 0;
}

/** A sign-in session as stored (no token material). */
export interface ParticipantSession {
  id: string;
  userId: string;
  selectedProfileId: string | null;
  /** When the session was opened: the time of its password (or temp-token) sign-in. */
  createdAt: Date;
  lastUsedAt: Date;
  lastEmailOtpAt: Date | null;
  expiresAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
}

/**
 * The session a verified participant token names (its `sid` claim, the principal's `sessionId`),
 * read from the database; null when the id is unknown, malformed or of another user. Ended
 * sessions are returned too (see `revokedAt`, `expiresAt`): participantAuth has refused their
 * tokens already.
 */
export async function findParticipantSession(
  db: Executor,
  sessionId: string,
  userId: string,
): Promise<ParticipantSession | null> {
  if (!UUID_PATTERN.test(sessionId)) return null;
  const [session] = await db
    .select({
      id: participantSessions.id,
      userId: participantSessions.userId,
      selectedProfileId: participantSessions.selectedProfileId,
      createdAt: participantSessions.createdAt,
      lastUsedAt: participantSessions.lastUsedAt,
      lastEmailOtpAt: participantSessions.lastEmailOtpAt,
      expiresAt: participantSessions.expiresAt,
      revokedAt: participantSessions.revokedAt,
      revokedReason: participantSessions.revokedReason,
    })
    .from(participantSessions)
    .where(and(eq(participantSessions.id, sessionId), eq(participantSessions.userId, userId)))
    .limit(1);
  return session ?? null;
}

/**
 * Whether a token's session is open: it exists, belongs to the user, is not revoked and has not
 * reached its absolute end. Checked on every participant request, so it is read through the read
 * cache (revocations announce themselves, see announceSessionChanges); a malformed id is refused
 * without a query.
 */
export async function isSessionOpen(db: Executor, sessionId: string, userId: string, now: Date): Promise<boolean> {
  if (!UUID_PATTERN.test(sessionId)) return false;
  const load = async () => {
    const [row] = await db
      .select({
        userId: participantSessions.userId,
        expiresAt: participantSessions.expiresAt,
        revokedAt: participantSessions.revokedAt,
      })
      .from(participantSessions)
      .where(eq(participantSessions.id, sessionId))
      .limit(1);
    if (!row) return undefined;
    return { userId: row.userId, endsAt: row.revokedAt ? 0 : row.expiresAt.getTime() };
  };
  const cache = readCacheOf(db);
  const state = cache ? await cache.get("session", sessionId, load) : await load();
  return state !== undefined && state.userId === userId && state.endsAt > now.getTime();
}

/**
 * Signs a session out (the participant's logout): its refresh tokens stop renewing and its access
 * tokens are refused from now on. Answers how many refresh tokens were still open. The read cache
 * forgets the session after the commit too, so a request that read it meanwhile does not keep it.
 */
export async function signOutSession(db: Database, sessionId: string, now: Date): Promise<number> {
  const open = await db.transaction(async (tx) => {
    const [row] = await tx
      .select({ n: count() })
      .from(refreshTokens)
      .where(and(eq(refreshTokens.sessionId, sessionId), isNull(refreshTokens.usedAt)));
    await revokeSession(tx, sessionId, "logout", now);
    return row?.n ?? 0;
  });
  forgetCached(db, "session", sessionId);
  return open;
}
