import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantSessions, profiles, refreshTokens, users } from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { hashPassword } from "@studyflow/domain/participant-accounts";
import {
  findParticipantSession,
  issueSessionTokens,
  renewSessionTokens,
  revokeSession,
  revokeUserSessions,
} from "@studyflow/domain/participant-sessions";
import { sessionTokenSettings } from "../src/routes/auth/participant-session-settings";
import { createTestApp, type TestApp } from "./test-app";

/** The session helpers other routes build on, and participantAuth's session check. */
describe("participant sessions (issueSessionTokens, renewSessionTokens, sid check)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const now = () => new Date(t.deps.clock());
  const settings = () => sessionTokenSettings(t.config);
  /** A participant route; its answer is 200 (main profile given) whenever the token is accepted. */
  const studies = async (token: string) => {
    const [main] = await t.database.db
      .select({ id: profiles.id })
      .from(profiles)
      .where(eq(profiles.userId, subjectOf(token)));
    return t.app.request(`/v1/study-service/participant/studies?profileID=${main?.id ?? "none"}`, {
      headers: { authorization: `Bearer ${token}` },
    });
  };
  const subjectOf = (token: string) =>
    (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { sub: string }).sub;

  async function createUser() {
    const [user] = await t.database.db
      .insert(users)
      .values({ email: `s-${randomBytes(5).toString("hex")}@example.org`, passwordHash: await hashPassword("x") })
      .returning();
    await t.database.db.insert(profiles).values({ userId: user!.id, mainProfile: true, alias: "me" });
    return user!;
  }

  it("issues a token pair whose access token works, with the main profile selected", async () => {
    const user = await createUser();
    const issued = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    expect(issued.expiresIn).toBe(t.config.PARTICIPANT_ACCESS_TOKEN_TTL_SECONDS);
    const [main] = await t.database.db.select().from(profiles).where(eq(profiles.userId, user.id));
    expect(issued.selectedProfileId).toBe(main!.id);
    expect((await studies(issued.accessToken)).status).toBe(200);
    const session = await findParticipantSession(t.database.db, issued.sessionId, user.id);
    expect(session).toMatchObject({ userId: user.id, revokedAt: null });
    // stored hashed only
    const [row] = await t.database.db.select().from(refreshTokens).where(eq(refreshTokens.sessionId, issued.sessionId));
    expect(row!.tokenHash).not.toContain(issued.refreshToken);
    // another user's id does not find it
    const other = await createUser();
    expect(await findParticipantSession(t.database.db, issued.sessionId, other.id)).toBeNull();
  });

  it("ends the access token at once when its session is revoked; other sessions go on", async () => {
    const user = await createUser();
    const first = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    const second = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    expect((await studies(first.accessToken)).status).toBe(200);
    await revokeSession(t.database.db, first.sessionId, "logout", now());
    const refused = await studies(first.accessToken);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: "signed out: sign in again" });
    expect((await studies(second.accessToken)).status).toBe(200);
  });

  it("revokeUserSessions with exceptSessionId keeps the caller's session and ends the others' access tokens", async () => {
    const user = await createUser();
    const mine = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    const other = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    // warm the cache with the other session's open state
    expect((await studies(other.accessToken)).status).toBe(200);
    await revokeUserSessions(t.database.db, user.id, "password-change", {
      now: now(),
      exceptSessionId: mine.sessionId,
    });
    expect((await studies(other.accessToken)).status).toBe(401);
    expect((await studies(mine.accessToken)).status).toBe(200);
  });

  it("a revocation by another process reaches this one through the announcement", async () => {
    const user = await createUser();
    const issued = await issueSessionTokens(t.database.db, { userId: user.id, now: now(), settings: settings() });
    expect((await studies(issued.accessToken)).status).toBe(200);
    // a connection that is not the app's: its cache is not told directly, only by NOTIFY
    await t.database.sql`update participant_sessions set revoked_at = now() where id = ${issued.sessionId}`;
    await t.database.sql`select pg_notify('studyflow_cache', ${`session:${issued.sessionId}`})`;
    await t.settle();
    expect((await studies(issued.accessToken)).status).toBe(401);
  });

  it("keeps tokens without a session (operator CLI) working", async () => {
    const user = await createUser();
    const token = await mintParticipantToken({
      now: Date.now(),
      userId: user.id,
      tokenVersion: 0,
      secret: t.config.PARTICIPANT_JWT_SECRET,
    });
    expect((await studies(token)).status).toBe(200);
  });

  it("refuses a token naming a malformed, unknown or foreign session", async () => {
    const user = await createUser();
    const other = await createUser();
    const foreign = await issueSessionTokens(t.database.db, { userId: other.id, now: now(), settings: settings() });
    for (const sessionId of ["not-a-uuid", "00000000-0000-4000-8000-000000000000", foreign.sessionId]) {
      const token = await mintParticipantToken({
        now: Date.now(),
        userId: user.id,
        tokenVersion: 0,
        secret: t.config.PARTICIPANT_JWT_SECRET,
        sessionId,
      });
      expect((await studies(token)).status).toBe(401);
    }
  });

  it("renews by rotation; a spent token answers its one successor within the grace, and after it revokes the family", async () => {
    const user = await createUser();
    const start = now();
    const issued = await issueSessionTokens(t.database.db, { userId: user.id, now: start, settings: settings() });
    const renew = (refreshToken: string, at: Date) =>
      renewSessionTokens(t.database.db, {
        userId: user.id,
        sessionId: issued.sessionId,
        refreshToken,
        now: at,
        settings: settings(),
      });
    const renewed = await renew(issued.refreshToken, new Date(start.getTime() + 1_000));
    expect(renewed.refreshToken).not.toBe(issued.refreshToken);
    expect(renewed.sessionId).toBe(issued.sessionId);
    // renewed again within the grace (a second tab, a retry after a lost answer): the same successor
    const retried = await renew(issued.refreshToken, new Date(start.getTime() + 5_000));
    expect(retried.refreshToken).toBe(renewed.refreshToken);
    expect(retried.sessionId).toBe(issued.sessionId);
    // after the grace: reuse
    await expect(renew(issued.refreshToken, new Date(start.getTime() + 60_000))).rejects.toThrow(/already used/);
    const [session] = await t.database.db
      .select()
      .from(participantSessions)
      .where(eq(participantSessions.id, issued.sessionId));
    expect(session!.revokedReason).toBe("refresh-reuse");
    await expect(renew(renewed.refreshToken, new Date(start.getTime() + 61_000))).rejects.toThrow(/session ended/);
    expect((await studies(renewed.accessToken)).status).toBe(401);
  });

  it("refuses locked accounts and accounts being deleted", async () => {
    const locked = await createUser();
    await t.database.db.update(users).set({ lockedAt: now() }).where(eq(users.id, locked.id));
    await expect(
      issueSessionTokens(t.database.db, { userId: locked.id, now: now(), settings: settings() }),
    ).rejects.toThrow(/not possible/);
    const leaving = await createUser();
    const issued = await issueSessionTokens(t.database.db, { userId: leaving.id, now: now(), settings: settings() });
    await t.database.db.update(users).set({ deletionRequestedAt: now() }).where(eq(users.id, leaving.id));
    await expect(
      renewSessionTokens(t.database.db, {
        userId: leaving.id,
        sessionId: issued.sessionId,
        refreshToken: issued.refreshToken,
        now: now(),
        settings: settings(),
      }),
    ).rejects.toThrow(/not possible/);
  });
});
