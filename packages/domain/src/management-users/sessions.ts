import { randomUUID } from "node:crypto";
import { and, eq, gt } from "drizzle-orm";
import { SignJWT } from "jose";
import { managementSessions, type Executor, type ManagementSessionKind } from "@studyflow/db";
import { SecretUnreadable, type SecretBox } from "../access/secret-box";
import { MANAGEMENT_TOKEN_TYPE, SESSION_ID_CLAIM, TOKEN_ISSUER, hmacKey } from "../access/tokens";
import { readCacheOf } from "../cache/read-cache";
import { Conflict, Forbidden, NotFound } from "../errors";
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
  now: Date;
}

/** Opens a session of a management user, its refresh token sealed (AES-256-GCM) for this row. */
export async function createManagementSession(
  db: Executor,
  box: SecretBox,
  input: NewManagementSession,
): Promise<{ id: string; expiresAt: Date }> {
  const id = randomUUID();
  const expiresAt = new Date(input.now.getTime() + input.ttlSeconds * 1000);
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

/**
 * Replaces the refresh token an open session of `userId` holds (case-admin's extend-session,
 * after the provider rotated it) and moves the session's end to `ttlSeconds` from now. Without a
 * new refresh token the session stays as it is. 404 for a session that is not open or not the
 * user's: a token names only its own session.
 */
export async function rotateManagementSession(
  db: Executor,
  box: SecretBox,
  input: { sessionId: string; userId: string; renewToken: string | null; ttlSeconds: number; now: Date },
): Promise<{ id: string; expiresAt: Date }> {
  const session = await openSession(db, input.sessionId, input.now);
  if (!session || session.userId !== input.userId) throw notFound(input.sessionId);
  if (!input.renewToken) {
    await db.update(managementSessions).set({ lastUsedAt: input.now }).where(eq(managementSessions.id, session.id));
    return { id: session.id, expiresAt: session.expiresAt };
  }
  const sealed = box.seal(input.renewToken, sealContext(session.id));
  const expiresAt = new Date(input.now.getTime() + input.ttlSeconds * 1000);
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
