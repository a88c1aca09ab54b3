import { randomUUID } from "node:crypto";
import { and, eq, gt } from "drizzle-orm";
import { SignJWT } from "jose";
import { managementSessions, type Executor, type ManagementSessionKind } from "@studyflow/db";
import { SecretUnreadable, type SecretBox } from "../access/secret-box";
import { MANAGEMENT_TOKEN_TYPE, SESSION_ID_CLAIM, TOKEN_ISSUER, hmacKey } from "../access/tokens";
import { readCacheOf } from "../cache/read-cache";
import { Conflict, Forbidden, NotFound, Unauthorized } from "../errors";
import { isManagementUserId } from "./users";

/** The context a session's refresh token is sealed for: it opens only for this session's row. */
const sealContext = (sessionId: string) => `management-session:${sessionId}`;

const notFound = (sessionId: string) => new NotFound(`session ${sessionId.slice(0, 100)} not found`);

export interface NewManagementSession {
  userId: string;
  kind: ManagementSessionKind;
  /** The identity provider's refresh token; "" or null when the sign-in brought none. */
  renewToken: string | null;
  ttlSeconds: number;
  /** The session's longest life from now, its sign-in, however often it is extended. */
  maxAgeSeconds: number;
  now: Date;
}

/** When a session signed in at `createdAt` ends at the latest. */
const lastEndOf = (createdAt: Date, maxAgeSeconds: number) => new Date(createdAt.getTime() + maxAgeSeconds * 1000);

/** `ttlSeconds` from `now`, never past the session's last end. */
const endOf = (now: Date, ttlSeconds: number, lastEnd: Date) =>
  new Date(Math.min(now.getTime() + ttlSeconds * 1000, lastEnd.getTime()));

/** Opens a session of a management user, its refresh token sealed (AES-256-GCM) for this row. */
export async function createManagementSession(
  db: Executor,
  box: SecretBox,
  input: NewManagementSession,
): Promise<{ id: string; expiresAt: Date }> {
  const id = randomUUID();
  const expiresAt = endOf(input.now, input.ttlSeconds, lastEndOf(input.now, input.maxAgeSeconds));
  const sealed = input.renewToken ? box.seal(input.renewToken, sealContext(id)) : null;
  await db.insert(managementSessions).values({
    id,
    userId: input.userId,
    kind: input.kind,
    renewTokenEnc: sealed,
    keyId: sealed ? box.keyId : null,
    createdAt: input.now,
    expiresAt,
    lastUsedAt: input.now,
  });
  return { id, expiresAt };
}

/** Session `sessionId` if it is open (not expired); a malformed id names none. */
async function openSession(db: Executor, sessionId: string, now: Date) {
  if (!isManagementUserId(sessionId)) return null;
  const [row] = await db
    .select()
    .from(managementSessions)
    .where(and(eq(managementSessions.id, sessionId), gt(managementSessions.expiresAt, now)))
    .limit(1);
  return row ?? null;
}

export interface ExtendableSessionInput {
  sessionId: string;
  userId: string;
  /** The longest a session lives from its sign-in (MANAGEMENT_SESSION_MAX_AGE_SECONDS). */
  maxAgeSeconds: number;
  now: Date;
}

/** A session that may still be extended: open, of its user, younger than its maximum age. */
export interface ExtendableSession {
  id: string;
  kind: ManagementSessionKind;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Session `sessionId` if it may be extended: 404 when it is not open or not the user's (a token
 * names only its own session), 401 once it has reached its maximum age from sign-in (also a
 * session opened before that age was configured, whose end lies further): the person signs in
 * again. `lock` holds the row against a concurrent extension or sign-out for the rest of `db`'s
 * transaction.
 */
export async function extendableManagementSession(
  db: Executor,
  input: ExtendableSessionInput,
  lock = false,
): Promise<ExtendableSession> {
  const session = lock
    ? await lockedOpenSession(db, input.sessionId, input.now)
    : await openSession(db, input.sessionId, input.now);
  if (!session || session.userId !== input.userId) throw notFound(input.sessionId);
  if (lastEndOf(session.createdAt, input.maxAgeSeconds).getTime() <= input.now.getTime()) {
    throw new Unauthorized("the session has reached its maximum age: sign in again");
  }
  return { id: session.id, kind: session.kind, createdAt: session.createdAt, expiresAt: session.expiresAt };
}

async function lockedOpenSession(db: Executor, sessionId: string, now: Date) {
  if (!isManagementUserId(sessionId)) return null;
  const [row] = await db
    .select()
    .from(managementSessions)
    .where(and(eq(managementSessions.id, sessionId), gt(managementSessions.expiresAt, now)))
    .for("update")
    .limit(1);
  return row ?? null;
}

/**
 * Replaces the refresh token an open session of `userId` holds (case-admin's extend-session,
 * after the provider rotated it) and moves the session's end to `ttlSeconds` from now, never past
 * its maximum age from sign-in. Without a new refresh token the session's end stays as it is.
 * Refused as extendableManagementSession refuses (404, 401 past the maximum age); run it in a
 * transaction, as the row is locked while it is checked and written.
 */
export async function rotateManagementSession(
  db: Executor,
  box: SecretBox,
  input: ExtendableSessionInput & { renewToken: string | null; ttlSeconds: number },
): Promise<{ id: string; expiresAt: Date }> {
  const session = await extendableManagementSession(db, input, true);
  if (!input.renewToken) {
    await db.update(managementSessions).set({ lastUsedAt: input.now }).where(eq(managementSessions.id, session.id));
    return { id: session.id, expiresAt: session.expiresAt };
  }
  const sealed = box.seal(input.renewToken, sealContext(session.id));
  const expiresAt = endOf(input.now, input.ttlSeconds, lastEndOf(session.createdAt, input.maxAgeSeconds));
  await db
    .update(managementSessions)
    .set({ renewTokenEnc: sealed, keyId: box.keyId, expiresAt, lastUsedAt: input.now })
    .where(eq(managementSessions.id, session.id));
  return { id: session.id, expiresAt };
}

/**
 * The refresh token session `sessionId` holds, opened ("" when it holds none), for its own user
 * only: 404 for an unknown or ended session, 403 for another user's. 409 when the token no longer
 * opens (sealed under a key no longer configured): the user signs in again.
 */
export async function renewTokenOfSession(
  db: Executor,
  box: SecretBox,
  input: { sessionId: string; userId: string; now: Date },
): Promise<string> {
  const session = await openSession(db, input.sessionId, input.now);
  if (!session) throw notFound(input.sessionId);
  if (session.userId !== input.userId) throw new Forbidden("session belongs to another user");
  if (!session.renewTokenEnc) return "";
  try {
    return box.open(session.renewTokenEnc, sealContext(session.id));
  } catch (error) {
    if (error instanceof SecretUnreadable) {
      throw new Conflict("the session's refresh token can no longer be read: sign in again");
    }
    throw error;
  }
}

/**
 * Whether a management token's session is open: it exists, belongs to the token's user and has
 * not reached its end. Checked on every request of a session token, so read through the read
 * cache (a session's end moving and its deletion are announced).
 */
export async function isManagementSessionOpen(
  db: Executor,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  return (await userOfOpenManagementSession(db, sessionId, now)) === userId;
}

/**
 * The management user whose session `sessionId` is open (exists and has not reached its end), or
 * undefined. Read through the read cache like isManagementSessionOpen: the console's session
 * cookie names a session and nothing else, and is checked on every request.
 */
export async function userOfOpenManagementSession(
  db: Executor,
  sessionId: string,
  now: Date,
): Promise<string | undefined> {
  if (!isManagementUserId(sessionId)) return undefined;
  const load = async () => {
    const [row] = await db
      .select({ userId: managementSessions.userId, expiresAt: managementSessions.expiresAt })
      .from(managementSessions)
      .where(eq(managementSessions.id, sessionId))
      .limit(1);
    return row ? { userId: row.userId, endsAt: row.expiresAt.getTime() } : undefined;
  };
  const cache = readCacheOf(db);
  const state = cache ? await cache.get("management-session", sessionId, load) : await load();
  return state !== undefined && state.endsAt > now.getTime() ? state.userId : undefined;
}

/**
 * Ends an open session now (sign-out): its end moves to `now`, which the read cache hears of, and
 * the sweeper removes the row later. False when it was not open (already ended, or unknown).
 */
export async function endManagementSession(db: Executor, sessionId: string, now: Date): Promise<boolean> {
  if (!isManagementUserId(sessionId)) return false;
  const ended = await db
    .update(managementSessions)
    .set({ expiresAt: now, renewTokenEnc: null, keyId: null })
    .where(and(eq(managementSessions.id, sessionId), gt(managementSessions.expiresAt, now)))
    .returning({ id: managementSessions.id });
  return ended.length > 0;
}

export interface ManagementSessionTokenInput {
  userId: string;
  sessionId: string;
  /** Shown in the token for clients; requests take the admin flag from the user's row. */
  isAdmin: boolean;
  secret: string;
  /** Seconds since the epoch at which the token ends. */
  expiresAt: number;
  now: Date;
}

/**
 * A management token of a sign-in session: HS256 `typ=management`, `sub` = the management
 * user's id, `sid` = the session. It works while the session is open (see isManagementSessionOpen).
 */
export function mintManagementSessionToken(input: ManagementSessionTokenInput): Promise<string> {
  return new SignJWT({ typ: MANAGEMENT_TOKEN_TYPE, admin: input.isAdmin, [SESSION_ID_CLAIM]: input.sessionId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(input.userId)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(Math.floor(input.now.getTime() / 1000))
    .setExpirationTime(input.expiresAt)
    .sign(hmacKey(input.secret));
}
