import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { managementSessions, managementUsers } from "@studyflow/db";
import { sweepExpiredManagementSessions } from "@studyflow/domain/management-users";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const NOW = new Date(Date.UTC(2031, 5, 1, 12, 0, 0));
const MINUTE = 60_000;

describe("sweeping ended management sessions", () => {
  let database: TestDatabase;
  let userId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const [user] = await database.db.insert(managementUsers).values({ provider: "idp", sub: "r" }).returning();
    userId = user!.id;
  });
  beforeEach(async () => {
    await database.db.delete(managementSessions);
  });
  afterAll(async () => {
    await database.drop();
  });

  const sessions = (ends: Date[]) =>
    database.db
      .insert(managementSessions)
      .values(
        ends.map((expiresAt) => ({ userId, kind: "case-admin" as const, expiresAt, renewTokenEnc: Buffer.from("x") })),
      )
      .returning({ id: managementSessions.id, expiresAt: managementSessions.expiresAt });
  const left = async () =>
    (await database.db.select({ expiresAt: managementSessions.expiresAt }).from(managementSessions))
      .map((row) => row.expiresAt.getTime() - NOW.getTime())
      .sort((a, b) => a - b);

  it("removes the sessions that have ended, up to now included, and keeps every open one", async () => {
    await sessions([
      new Date(NOW.getTime() - 30 * 24 * 60 * MINUTE),
      new Date(NOW.getTime() - MINUTE),
      NOW,
      new Date(NOW.getTime() + 1),
      new Date(NOW.getTime() + 60 * MINUTE),
    ]);
    expect(await sweepExpiredManagementSessions(database.db, NOW)).toEqual({ removed: 3, batches: 1 });
    expect(await left()).toEqual([1, 60 * MINUTE]);
    // a second sweep finds nothing
    expect(await sweepExpiredManagementSessions(database.db, NOW)).toEqual({ removed: 0, batches: 1 });
  });

  it("goes in batches and stops after its batch budget; the next sweep goes on", async () => {
    const ended = Array.from({ length: 25 }, (_, index) => new Date(NOW.getTime() - (index + 1) * MINUTE));
    await sessions([...ended, new Date(NOW.getTime() + MINUTE)]);
    expect(await sweepExpiredManagementSessions(database.db, NOW, { batchSize: 10, maxBatches: 2 })).toEqual({
      removed: 20,
      batches: 2,
    });
    expect(await left()).toHaveLength(6);
    expect(await sweepExpiredManagementSessions(database.db, NOW, { batchSize: 10 })).toEqual({
      removed: 5,
      batches: 1,
    });
    expect(await left()).toEqual([MINUTE]);
  });

  it("skips sessions another transaction holds (an extend-session in flight) and removes them next time", async () => {
    const [held] = await sessions([new Date(NOW.getTime() - MINUTE)]);
    await sessions([new Date(NOW.getTime() - 2 * MINUTE)]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = database.db.transaction(async (tx) => {
      await tx.execute(`select id from management_sessions where id = '${held!.id}' for update`);
      locked();
      await released;
    });
    await isLocked;
    try {
      expect(await sweepExpiredManagementSessions(database.db, NOW)).toEqual({ removed: 1, batches: 1 });
    } finally {
      release();
      await holder;
    }
    expect(await sweepExpiredManagementSessions(database.db, NOW)).toEqual({ removed: 1, batches: 1 });
    expect(await left()).toEqual([]);
  });
});
