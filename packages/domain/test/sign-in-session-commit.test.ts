import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, participantSessions, profiles, refreshTokens, users, type DbHandle } from "@studyflow/db";
import { openSignInSession } from "@studyflow/domain/participant-sessions";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const SETTINGS = {
  secret: "sign-in-session-commit-test-secret-0123456789",
  accessTokenTtlSeconds: 300,
  refreshTokenTtlSeconds: 3_600,
  sessionMaxAgeSeconds: 86_400,
  refreshGraceSeconds: 10,
};

describe("a password sign-in's session statement, committed without waiting for the flush", () => {
  let database: TestDatabase;
  // one connection: what the sign-in ran on is what the next statement runs on
  let single: DbHandle;
  let userId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    single = createDb(database.url, { max: 1 });
    const [account] = await database.db
      .insert(users)
      .values({ email: "commit@example.org", passwordHash: "unused", preferredLanguage: "en" })
      .returning();
    userId = account!.id;
    await database.db.insert(profiles).values({ userId, mainProfile: true });
  });
  afterAll(async () => {
    await single.close();
    await database.drop();
  });

  it("leaves the connection's synchronous_commit as it was: the setting ends with the sign-in's own transaction", async () => {
    const [before] = await single.sql<{ synchronous_commit: string }[]>`show synchronous_commit`;
    expect(before?.synchronous_commit).toBe("on");
    const { tokens, profiles: read } = await openSignInSession(single.db, {
      userId,
      now: new Date(),
      settings: SETTINGS,
    });
    expect(read).toHaveLength(1);
    const [after] = await single.sql<{ synchronous_commit: string }[]>`show synchronous_commit`;
    expect(after?.synchronous_commit).toBe("on");
    // committed: another connection sees the session and its refresh token at once
    const [session] = await database.db
      .select()
      .from(participantSessions)
      .where(eq(participantSessions.id, tokens.sessionId));
    expect(session?.userId).toBe(userId);
    const refresh = await database.db.select().from(refreshTokens).where(eq(refreshTokens.sessionId, tokens.sessionId));
    expect(refresh).toHaveLength(1);
  });

  it("refuses to run inside a caller's transaction, whose other writes would commit without the wait too", async () => {
    await expect(
      database.db.transaction((tx) =>
        openSignInSession(tx as unknown as typeof database.db, { userId, now: new Date(), settings: SETTINGS }),
      ),
    ).rejects.toThrow(/not in a transaction/);
    const sessions = await database.db.select().from(participantSessions).where(eq(participantSessions.userId, userId));
    expect(sessions).toHaveLength(1);
  });
});
