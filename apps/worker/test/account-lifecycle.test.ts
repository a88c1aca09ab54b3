import { Queue } from "bullmq";
import { pino } from "pino";
import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountDeletions, auditLog, outgoingMessages, participantSessions, users } from "@studyflow/db";
import { type AccountLifecycleSettings } from "@studyflow/domain/participant-accounts";
import { createUserWithProfiles } from "@studyflow/domain/study-setup";
import { ACCOUNT_LIFECYCLE_QUEUE, createRedisConnection } from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import { upsertSchedules } from "../src/schedules/upsert-schedules";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const DAY = 86_400;
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);

const settings: AccountLifecycleSettings = {
  unverifiedDeleteAfterSeconds: 7 * DAY,
  unverifiedReminderAfterSeconds: 2 * DAY,
  inactiveNotifyAfterSeconds: 365 * DAY,
  inactiveDeleteAfterNoticeSeconds: 14 * DAY,
  verifyEmail: { url: "https://app.example.org/link/verify-contact", ttlSeconds: 7 * DAY },
};

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("account lifecycle rounds on two workers", () => {
  let harness: WorkerHarness;

  beforeAll(async () => {
    harness = await createWorkerHarness();
  });
  afterAll(async () => {
    await harness.close();
  });

  async function account(email: string, values: Partial<typeof users.$inferInsert>): Promise<string> {
    const made = await createUserWithProfiles(harness.database.db, {
      now: new Date(),
      email,
      password: "Correct-Horse-Battery-9",
      profiles: ["main"],
    });
    await harness.database.db.update(users).set(values).where(eq(users.id, made.user.id));
    return made.user.id;
  }

  const mailsTo = async (userId: string, template: string) =>
    harness.database.db
      .select()
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.userId, userId), eq(outgoingMessages.template, template)));

  const userExists = async (userId: string) =>
    (await harness.database.db.select({ id: users.id }).from(users).where(eq(users.id, userId))).length === 1;

  it("handles each aged account exactly once, skips locked and deleting ones, spares one that signed in", async () => {
    const db = harness.database.db;
    const stale = await account("stale@example.org", { createdAt: ago(10 * DAY) });
    const unconfirmed = await account("unconfirmed@example.org", { createdAt: ago(3 * DAY) });
    const fresh = await account("fresh@example.org", { createdAt: ago(DAY) });
    const locked = await account("locked@example.org", { createdAt: ago(10 * DAY), lockedAt: ago(DAY) });
    const deleting = await account("deleting@example.org", { createdAt: ago(3 * DAY), deletionRequestedAt: ago(60) });
    const idle = await account("idle@example.org", {
      createdAt: ago(800 * DAY),
      accountConfirmedAt: ago(800 * DAY),
      lastLoginAt: ago(400 * DAY),
    });
    // A session renewed recently counts as activity though the last sign-in is old.
    const renewing = await account("renewing@example.org", {
      createdAt: ago(800 * DAY),
      accountConfirmedAt: ago(800 * DAY),
      lastLoginAt: ago(400 * DAY),
    });
    await db
      .insert(participantSessions)
      .values({ userId: renewing, lastUsedAt: ago(DAY), expiresAt: new Date(Date.now() + 30 * DAY * 1000) });
    const noticed = await account("noticed@example.org", {
      createdAt: ago(800 * DAY),
      accountConfirmedAt: ago(800 * DAY),
      lastLoginAt: ago(400 * DAY),
      inactivityNotifiedAt: ago(20 * DAY),
    });
    await db.insert(outgoingMessages).values({
      template: "account-inactivity",
      toAddress: "noticed@example.org",
      userId: noticed,
      status: "sent",
      sentAt: ago(20 * DAY),
    });
    const returned = await account("returned@example.org", {
      createdAt: ago(800 * DAY),
      accountConfirmedAt: ago(800 * DAY),
      lastLoginAt: ago(5 * DAY),
      inactivityNotifiedAt: ago(20 * DAY),
    });
    // Notified 20 days ago, but the notice is still waiting for delivery: no deletion yet.
    const undelivered = await account("undelivered@example.org", {
      createdAt: ago(800 * DAY),
      accountConfirmedAt: ago(800 * DAY),
      lastLoginAt: ago(400 * DAY),
      inactivityNotifiedAt: ago(20 * DAY),
    });
    await db
      .insert(outgoingMessages)
      .values({ template: "account-inactivity", toAddress: "undelivered@example.org", userId: undelivered });

    const replicas = [1, 2].map(() =>
      harness.start({
        maintenance: true,
        accountLifecycle: { settings, everyMs: 150 },
        logger: pino({ level: "warn" }),
      }),
    );
    await Promise.all(replicas.map((replica) => replica.schedulesReady));

    await waitFor(async () => !(await userExists(stale)) && !(await userExists(noticed)), "the two deletions");
    await waitFor(async () => (await mailsTo(unconfirmed, "registration")).length > 0, "the reminder");
    await waitFor(async () => (await mailsTo(idle, "account-inactivity")).length > 0, "the notice");
    // More rounds on both workers: none of them may handle an account again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const reminders = await mailsTo(unconfirmed, "registration");
    expect(reminders).toHaveLength(1);
    expect(reminders[0]?.payload).toMatchObject({
      verifyUrl: expect.stringMatching(/^https:\/\/app\.example\.org\/link\/verify-contact\?token=/) as string,
      token: expect.any(String) as string,
    });
    expect((await mailsTo(idle, "account-inactivity")).length).toBe(1);
    const [idleRow] = await db.select().from(users).where(eq(users.id, idle));
    expect(idleRow?.inactivityNotifiedAt).not.toBeNull();

    // One deletion each, through the deletion task, with the reason's confirmation.
    const deletions = await db.select().from(accountDeletions);
    expect(deletions.map((d) => [d.userId, d.reason, d.status]).sort()).toEqual(
      [
        [stale, "unverified", "done"],
        [noticed, "inactivity", "done"],
      ].sort(),
    );
    const requests = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "participant-user.delete-request"), eq(auditLog.actor, "account-lifecycle")));
    expect(requests.map((r) => r.target).sort()).toEqual([stale, noticed].sort());
    const confirmations = await db
      .select()
      .from(outgoingMessages)
      .where(inArray(outgoingMessages.toAddress, ["stale@example.org", "noticed@example.org"]));
    // The never-proven address gets nothing; the inactive one CASE's after-inactivity message.
    expect(confirmations.map((m) => [m.toAddress, m.template])).toEqual([
      ["noticed@example.org", "account-deleted-after-inactivity"],
    ]);

    // Untouched: too new, locked, being deleted, active through a session, signed in after the
    // notice, notice not yet delivered.
    for (const userId of [fresh, locked, deleting, renewing, returned, undelivered]) {
      expect(await userExists(userId)).toBe(true);
      expect(await mailsTo(userId, "registration")).toEqual([]);
    }
    for (const userId of [renewing, returned]) expect(await mailsTo(userId, "account-inactivity")).toEqual([]);
    expect(await mailsTo(undelivered, "account-inactivity")).toHaveLength(1);
    const [deletingRow] = await db.select().from(accountDeletions).where(eq(accountDeletions.userId, deleting));
    expect(deletingRow).toBeUndefined();
  });
});

describe("account lifecycle schedulers", () => {
  let harness: WorkerHarness;
  const producer = createRedisConnection(testRedisUrl, "producer");
  let queue: Queue;

  beforeAll(async () => {
    harness = await createWorkerHarness();
    queue = new Queue(ACCOUNT_LIFECYCLE_QUEUE, { connection: producer, prefix: harness.prefix });
  });
  afterAll(async () => {
    await queue.close();
    await harness.close();
    producer.disconnect();
  });

  it("registers only the configured rounds, and removes all when none is configured", async () => {
    const first = harness.start({
      maintenance: true,
      accountLifecycle: {
        settings: {
          inactiveDeleteAfterNoticeSeconds: DAY,
          verifyEmail: settings.verifyEmail,
          unverifiedReminderAfterSeconds: DAY,
        },
      },
    });
    await first.schedulesReady;
    expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual(["remind-unverified-accounts"]);
    await first.close(5_000);

    // A scheduler left from an earlier configuration goes when the worker starts without one.
    await upsertSchedules(queue, [
      { id: "handle-inactive-accounts", every: 60_000, data: { kind: "handle-inactive-accounts" } },
    ]);
    const unconfigured = harness.start({ maintenance: true });
    await unconfigured.schedulesReady;
    expect(await queue.getJobSchedulers()).toEqual([]);
    expect(unconfigured.queues.map((q) => q.name)).not.toContain(ACCOUNT_LIFECYCLE_QUEUE);
  });
});
