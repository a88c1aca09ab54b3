import { and, eq } from "drizzle-orm";
import { participantSessions, users, type Executor } from "@studyflow/db";
import { verifyPassword } from "../accounts/passwords";
import { Unauthorized } from "../errors";

/** What DELETE /v1/user answers when the caller has not proven itself recently. */
export const REAUTHENTICATION_REQUIRED_MESSAGE =
  "deleting the account needs a recent sign-in: sign in again (or send your current password) and retry";

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
 * Whether the caller has proven to be the account's owner recently: its session was opened by a
 * sign-in, or had an e-mail OTP verified, within `maxAgeSeconds`; or it sent the current password.
 * A stolen access token alone therefore cannot delete an account once its sign-in is old.
 *
 * @throws Unauthorized({@link REAUTHENTICATION_REQUIRED_MESSAGE}) otherwise.
 */
export async function assertRecentlyAuthenticated(
  db: Executor,
  input: ReauthenticationInput,
): Promise<"session" | "password"> {
  if (input.sessionId !== undefined && /^[0-9a-f-]{36}$/i.test(input.sessionId)) {
    const [session] = await db
      .select({ createdAt: participantSessions.createdAt, lastEmailOtpAt: participantSessions.lastEmailOtpAt })
      .from(participantSessions)
      .where(and(eq(participantSessions.id, input.sessionId), eq(participantSessions.userId, input.userId)))
      .limit(1);
    if (session) {
      const lastProof = Math.max(session.createdAt.getTime(), session.lastEmailOtpAt?.getTime() ?? 0);
      if (input.now.getTime() - lastProof <= input.maxAgeSeconds * 1000) return "session";
    }
  }
  if (input.password !== undefined && input.password !== "") {
    const [user] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, input.userId)).limit(1);
    if (user && (await verifyPassword(user.hash, input.password))) return "password";
    throw new Unauthorized("wrong password: sign in again or send your current password to delete the account");
  }
  throw new Unauthorized(REAUTHENTICATION_REQUIRED_MESSAGE);
}
