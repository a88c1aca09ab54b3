import { and, eq } from "drizzle-orm";
import { participantSessions, users, type Executor } from "@studyflow/db";
import { verifyPassword } from "../passwords";
import { Unauthorized } from "../../errors";

/** What DELETE /v1/user answers when the caller has not proven itself recently. */
export const REAUTHENTICATION_REQUIRED_MESSAGE =
  "deleting the account needs a recent sign-in: sign in again (or send your current password) and retry";

/** What DELETE /v1/user answers for a password that is not the account's. */
export const REAUTHENTICATION_WRONG_PASSWORD_MESSAGE =
  "wrong password: sign in again or send your current password to delete the account";

export interface ReauthenticationInput {
  userId: string;
  /** The session of the caller's token (its `sid`); absent for tokens without one. */
  sessionId?: string | undefined;
  /** The account's current password, when the caller sent it. */
  password?: string | undefined;
  now: Date;
  /** How old the session's last proof (password sign-in, verified e-mail OTP) may be. */
  maxAgeSeconds: number;
}

/**
 * Whether the caller has proven to be the account's owner recently: it sent the current password,
 * or its session had a password sign-in or a verified e-mail OTP code within `maxAgeSeconds`
 * (`identityProvenAt`; a session opened by a mailed link has none). A stolen access token alone
 * therefore cannot delete an account once its sign-in is old, nor can a mailed link.
 *
 * A password that is sent must be the account's, even when the session alone would do: a wrong one
 * is refused rather than ignored, so a caller is never told "deleted" for a password that is not
 * the account's, and every wrong guess counts against the route's limit.
 *
 * @throws Unauthorized({@link REAUTHENTICATION_WRONG_PASSWORD_MESSAGE}) for a wrong password,
 *   Unauthorized({@link REAUTHENTICATION_REQUIRED_MESSAGE}) without a recent proof.
 */
export async function assertRecentlyAuthenticated(
  db: Executor,
  input: ReauthenticationInput,
): Promise<"session" | "password"> {
  // An empty field is no password (a form left blank), as no account has the empty password.
  if (input.password !== undefined && input.password !== "") {
    const [user] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, input.userId)).limit(1);
    if (user && (await verifyPassword(user.hash, input.password).catch(() => false))) {
      return "password";
    }
    throw new Unauthorized(REAUTHENTICATION_WRONG_PASSWORD_MESSAGE);
  }
  if (input.sessionId !== undefined && /^[0-9a-f-]{36}$/i.test(input.sessionId)) {
    const [session] = await db
      .select({ provenAt: participantSessions.identityProvenAt })
      .from(participantSessions)
      .where(and(eq(participantSessions.id, input.sessionId), eq(participantSessions.userId, input.userId)))
      .limit(1);
    if (session?.provenAt && input.now.getTime() - session.provenAt.getTime() <= input.maxAgeSeconds * 1000) {
      return "session";
    }
  }
  throw new Unauthorized(REAUTHENTICATION_REQUIRED_MESSAGE);
}
