import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passwordResetTokens, users } from "@studyflow/db";
import {
  createAccountToken,
  peekAccountToken,
  sweepExpiredAccountTokens,
} from "@studyflow/domain/participant-accounts";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const NOW = new Date(Date.UTC(2031, 5, 1, 12, 0, 0));
const HOUR = 3_600;

describe("sweeping expired one-time account tokens", () => {
  let database: TestDatabase;
  let userId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const [account] = await database.db
      .insert(users)
      .values({ email: "sweep@example.org", passwordHash: "unused", preferredLanguage: "en" })
      .returning();
    userId = account!.id;
  });
  afterAll(async () => {
    await database.drop();
  });

  const issue = (
    purpose: "password-reset" | "survey-login" | "unsubscribe-newsletter",
    issuedHoursAgo: number,
    ttlHours: number,
  ) =>
    createAccountToken(database.db, {
      userId,
      purpose,
      ttlSeconds: ttlHours * HOUR,
      now: new Date(NOW.getTime() - issuedHoursAgo * HOUR * 1000),
    });

  it("removes tokens past their expiry, used or not, and keeps every valid one usable", async () => {
    const expiredReset = await issue("password-reset", 3, 2);
    await issue("survey-login", 24 * 8, 24 * 7);
    const endsNow = await issue("unsubscribe-newsletter", 1, 1);
    const valid = await issue("password-reset", 1, 2);
    const longValid = await issue("unsubscribe-newsletter", 24, 24 * 90);

    expect(await sweepExpiredAccountTokens(database.db, NOW)).toEqual({ removed: 3, batches: 1 });
    expect(await database.db.select().from(passwordResetTokens)).toHaveLength(2);
    // the valid ones still open; the removed ones were refused before and are refused now
    expect(await peekAccountToken(database.db, valid, ["password-reset"], NOW)).toMatchObject({ userId });
    expect(await peekAccountToken(database.db, longValid, ["unsubscribe-newsletter"], NOW)).toMatchObject({ userId });
    expect(await peekAccountToken(database.db, expiredReset, ["password-reset"], NOW)).toBeNull();
    expect(await peekAccountToken(database.db, endsNow, ["unsubscribe-newsletter"], NOW)).toBeNull();
    expect(await sweepExpiredAccountTokens(database.db, NOW)).toEqual({ removed: 0, batches: 1 });
  });

  it("goes in batches and stops after its budget; the next sweep goes on", async () => {
    await database.db.delete(passwordResetTokens);
    for (let index = 0; index < 25; index++) await issue("survey-login", 2 + index, 1);
    await issue("survey-login", 0, 1);
    expect(await sweepExpiredAccountTokens(database.db, NOW, { batchSize: 10, maxBatches: 2 })).toEqual({
      removed: 20,
      batches: 2,
    });
    expect(await sweepExpiredAccountTokens(database.db, NOW, { batchSize: 10 })).toEqual({ removed: 5, batches: 1 });
    expect(await database.db.select().from(passwordResetTokens)).toHaveLength(1);
  });
});
