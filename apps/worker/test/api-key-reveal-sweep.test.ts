import { randomBytes } from "node:crypto";
import { Queue } from "bullmq";
import { eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { apiKeys, serviceAccounts } from "@studyflow/db";
import {
  API_KEY_REVEAL_WINDOW_MS,
  SecretBox,
  createServiceAccountApiKey,
  listServiceAccountApiKeys,
  sweepApiKeyRevealCopies,
} from "@studyflow/domain/access";
import { MAINTENANCE_QUEUE, createRedisConnection } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

// A new API key's sealed copy waits API_KEY_REVEAL_WINDOW_MS for its creator's first key list;
// one nobody came for is erased by the hourly sweep of sealed secrets (sweep-management-sessions).

const NOW = new Date(Date.UTC(2031, 5, 1, 12, 0, 0));
const MINUTE = 60_000;

describe("erasing API key copies past their reveal window", () => {
  let h: WorkerHarness;
  let accountId: string;
  const box = new SecretBox(randomBytes(32));
  const producer = createRedisConnection(testRedisUrl, "producer");
  let maintenance: Queue;

  beforeAll(async () => {
    h = await createWorkerHarness();
    maintenance = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix: h.prefix });
    const [account] = await h.database.db
      .insert(serviceAccounts)
      .values({ label: "exporter", createdBy: "rita" })
      .returning();
    accountId = account!.id;
  });
  beforeEach(async () => {
    await h.database.db.delete(apiKeys);
  });
  afterAll(async () => {
    await h.close();
    await maintenance.close();
    producer.disconnect();
  });

  /** A key made `minutesAgo` before NOW, through the API (with a copy) or the CLI (without). */
  const keyMade = async (minutesAgo: number, withCopy = true) =>
    (
      await createServiceAccountApiKey(h.database.db, {
        serviceAccountId: accountId,
        createdBy: "rita",
        now: new Date(NOW.getTime() - minutesAgo * MINUTE),
        ...(withCopy ? { revealBox: box } : {}),
      })
    ).apiKey.id;
  const withCopies = async () =>
    (await h.database.db.select({ id: apiKeys.id }).from(apiKeys).where(isNotNull(apiKeys.revealSealed))).map(
      (row) => row.id,
    );

  it("erases the copies whose window has ended, up to now included, and keeps those still waiting", async () => {
    expect(API_KEY_REVEAL_WINDOW_MS).toBe(10 * MINUTE);
    const longGone = await keyMade(60 * 24);
    const justEnded = await keyMade(10);
    const waiting = await keyMade(9);
    const cli = await keyMade(30, false);
    expect((await withCopies()).sort()).toEqual([longGone, justEnded, waiting].sort());

    expect(await sweepApiKeyRevealCopies(h.database.db, NOW)).toEqual({ removed: 2, batches: 1 });
    expect(await withCopies()).toEqual([waiting]);
    const [erased] = await h.database.db.select().from(apiKeys).where(eq(apiKeys.id, justEnded));
    expect(erased).toMatchObject({ revealSealed: null, revealUntil: null });
    // the keys themselves stay, and still work as before
    expect((await h.database.db.select().from(apiKeys)).map((row) => row.id).sort()).toEqual(
      [longGone, justEnded, waiting, cli].sort(),
    );
    expect(await sweepApiKeyRevealCopies(h.database.db, NOW)).toEqual({ removed: 0, batches: 1 });

    // the one still waiting is its creator's to see, once
    const listed = await listServiceAccountApiKeys(h.database.db, accountId, { subject: "rita", box, now: NOW });
    expect(listed.filter((key) => key.revealed).map((key) => key.id)).toEqual([waiting]);
    expect(await withCopies()).toEqual([]);
  });

  it("works in batches and stops after maxBatches; a copy a list holds locked is left to it", async () => {
    await Promise.all([11, 12, 13, 14, 15].map((minutes) => keyMade(minutes)));
    expect(await sweepApiKeyRevealCopies(h.database.db, NOW, { batchSize: 2, maxBatches: 1 })).toEqual({
      removed: 2,
      batches: 1,
    });
    expect(await withCopies()).toHaveLength(3);
    await h.database.sql.begin(async (tx) => {
      const locked = (await withCopies())[0]!;
      await tx`select id from api_keys where id = ${locked} for update`;
      expect(await sweepApiKeyRevealCopies(h.database.db, NOW, { batchSize: 2 })).toEqual({ removed: 2, batches: 2 });
      expect(await withCopies()).toEqual([locked]);
    });
    expect(await sweepApiKeyRevealCopies(h.database.db, NOW)).toEqual({ removed: 1, batches: 1 });
    expect(await withCopies()).toEqual([]);
  });

  it("runs in the maintenance queue's hourly sweep-management-sessions round", async () => {
    const unclaimed = await keyMade(20);
    const waiting = await keyMade(1);
    const replica = h.start({ maintenance: true, clock: () => NOW.getTime() });
    await replica.schedulesReady;
    const deadline = Date.now() + 15_000;
    const round = async () =>
      (await maintenance.getJobs(["completed"])).find((job) => job.name === "sweep-management-sessions");
    let done = await round();
    while (!done && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      done = await round();
    }
    expect(done?.returnvalue).toEqual({ removed: 0, batches: 1, apiKeyRevealCopiesErased: 1 });
    expect(await withCopies()).toEqual([waiting]);
    const [row] = await h.database.db.select().from(apiKeys).where(eq(apiKeys.id, unclaimed));
    expect(row).toMatchObject({ revealSealed: null, revealUntil: null });
  });
});
