import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accountDeletions, outgoingMessages, participants, reports, users } from "@studyflow/db";
import { enterStudy } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { requestAccountDeletion } from "@studyflow/domain/participant-accounts";
import { createUserWithProfiles } from "@studyflow/domain/study-setup";
import {
  ACCOUNT_DELETION_QUEUE,
  accountDeletionJobId,
  createRedisConnection,
  queueAccountDeletion,
  type AccountDeletionJob,
} from "@studyflow/queue";
import { STRONG_PASSWORD, onEvent, testRedisUrl } from "@studyflow/testkit";
import { SWEEP_LOCK_ID, sweepAccountDeletions } from "../src/processors/account-deletion";
import { call, createWorkerHarness, str, studyWithRules, type WorkerHarness } from "./worker-harness";

/**
 * The worker's account deletions on a real Redis (the harness's own prefix) and Postgres: a queued
 * deletion runs to done through the processor the runtime starts, a failing run is recorded on the
 * row and finished by BullMQ's retry, and the sweeper queues again a deletion whose job was lost,
 * one sweeper at a time.
 */

const silent = pino({ level: "silent" });
const STUDY = "deletion-study";
const rules = [
  onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes"))),
  onEvent("LEAVE", call("UPDATE_FLAG", str("left"), str("yes")), call("INIT_REPORT", str("goodbye"))),
];

describe("account deletions in the worker", () => {
  let h: WorkerHarness;
  let deletionQueue: Queue;
  let producer: ReturnType<typeof createRedisConnection>;

  beforeEach(async () => {
    h = await createWorkerHarness();
    producer = createRedisConnection(testRedisUrl, "producer");
    deletionQueue = new Queue(ACCOUNT_DELETION_QUEUE, { connection: producer, prefix: h.prefix });
    await studyWithRules(h, STUDY, rules);
  });
  afterEach(async () => {
    await h.database.sql`drop trigger if exists refuse_account_deleted on participants`;
    await deletionQueue.close();
    producer.disconnect();
    await h.close();
  });

  /** An account with two profiles, both participants of the study, and its deletion requested at `requestedAt`. */
  async function accountToDelete(requestedAt = new Date()) {
    const created = await createUserWithProfiles(h.database.db, {
      now: new Date(),
      email: `someone-${Math.random().toString(36).slice(2, 10)}@example.org`,
      password: STRONG_PASSWORD,
      profiles: ["main", "child"],
    });
    for (const profile of created.profiles) {
      await enterStudy(h.database.db, { studyKey: STUDY, userId: created.user.id, profile }, { clock: Date.now });
    }
    const { deletion } = await requestAccountDeletion(h.database.db, { userId: created.user.id, now: requestedAt });
    return { user: created.user, deletionId: deletion.id };
  }

  const deletionRow = async (deletionId: string) =>
    (await h.database.db.select().from(accountDeletions).where(eq(accountDeletions.id, deletionId)))[0];

  async function waitForDeletion(deletionId: string, status: string, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await deletionRow(deletionId);
      if (row?.status === status) return row;
      if (Date.now() > deadline) throw new Error(`deletion ${deletionId} is ${row?.status}, not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const studyStatuses = async () =>
    (await h.database.db.select({ status: participants.studyStatus }).from(participants)).map((row) => row.status);

  it("a queued deletion runs to done: LEAVE rules, accountDeleted, the account gone, the mail queued, the job's progress", async () => {
    const { user, deletionId } = await accountToDelete();
    h.start();
    await queueAccountDeletion(deletionQueue, deletionId);

    const done = await waitForDeletion(deletionId, "done");
    expect(done.progress.done).toHaveLength(2);
    expect(done.error).toBeNull();
    expect(done.finishedAt).not.toBeNull();
    expect(await studyStatuses()).toEqual(["accountDeleted", "accountDeleted"]);
    expect(await h.database.db.select().from(reports).where(eq(reports.key, "goodbye"))).toHaveLength(2);
    expect(await h.database.db.select().from(users).where(eq(users.id, user.id))).toHaveLength(0);
    const mails = await h.database.db
      .select()
      .from(outgoingMessages)
      .where(eq(outgoingMessages.template, "account-deleted"));
    expect(mails.map((mail) => mail.toAddress)).toEqual([user.email]);

    const job = await deletionQueue.getJob(accountDeletionJobId(deletionId));
    await expect.poll(() => job?.getState()).toBe("completed");
    const finished = await deletionQueue.getJob(accountDeletionJobId(deletionId));
    expect(finished?.returnvalue).toEqual({ status: "done", profiles: 2, studies: 1, participants: 2 });
    expect(finished?.progress).toEqual({ done: 2, total: 2 });
  });

  it("a failing run marks the row failed with its error; BullMQ's retry finishes it, nothing done twice", async () => {
    const { user, deletionId } = await accountToDelete();
    // The database refuses the participants' last change until the trigger goes, as an outage would.
    await h.database.sql.unsafe(`
      create or replace function refuse_account_deleted() returns trigger language plpgsql as $$
      begin
        if new.study_status = 'accountDeleted' then raise exception 'participants are read-only for now'; end if;
        return new;
      end $$;
      create trigger refuse_account_deleted before update on participants
        for each row execute function refuse_account_deleted();`);
    h.start();
    await queueAccountDeletion(deletionQueue, deletionId);

    const failed = await waitForDeletion(deletionId, "failed");
    expect(failed.error).toMatch(/participants are read-only for now/);
    expect(failed.progress.done).toEqual([]);
    expect(await h.database.db.select().from(users).where(eq(users.id, user.id))).toHaveLength(1);
    // the row is marked failed before the attempt throws: BullMQ counts the attempt a moment later
    await expect
      .poll(async () => (await deletionQueue.getJob(accountDeletionJobId(deletionId)))?.attemptsMade)
      .toBeGreaterThanOrEqual(1);

    await h.database.sql`drop trigger refuse_account_deleted on participants`;
    // the job's backoff is 2 s, then 4 s: the next attempt takes it to the end
    const done = await waitForDeletion(deletionId, "done");
    expect(done.error).toBeNull();
    expect(done.progress.done).toHaveLength(2);
    expect(await studyStatuses()).toEqual(["accountDeleted", "accountDeleted"]);
    expect(await h.database.db.select().from(reports).where(eq(reports.key, "goodbye"))).toHaveLength(2);
    expect(await h.database.db.select().from(users).where(eq(users.id, user.id))).toHaveLength(0);
  }, 60_000);

  it("the sweeper queues a pending deletion whose job was lost, not a recent one nor one with a live job", async () => {
    const lost = await accountToDelete(new Date(Date.now() - 5 * 60_000));
    const recent = await accountToDelete(new Date());
    const sweep = () =>
      sweepAccountDeletions({ clock: systemClock, database: h.database, queue: deletionQueue, logger: silent });

    expect(await sweep()).toEqual({ requeued: [lost.deletionId] });
    const job = await deletionQueue.getJob(accountDeletionJobId(lost.deletionId));
    expect(job?.data).toEqual({ kind: "delete-account", deletionId: lost.deletionId });
    expect(await job?.getState()).toBe("waiting");
    expect(await deletionQueue.getJob(accountDeletionJobId(recent.deletionId))).toBeUndefined();
    // its job is waiting now: a second sweep leaves it alone
    expect(await sweep()).toEqual({ requeued: [] });
    expect(await deletionQueue.getJobCounts("waiting")).toEqual({ waiting: 1 });

    // a worker takes the queued job to the end
    h.start();
    await waitForDeletion(lost.deletionId, "done");
    expect((await deletionRow(recent.deletionId))?.status).toBe("pending");
  });

  it("the sweeper holds its advisory lock: while another sweep holds it, this one skips its turn", async () => {
    const lost = await accountToDelete(new Date(Date.now() - 5 * 60_000));
    const sweep = () =>
      sweepAccountDeletions({ clock: systemClock, database: h.database, queue: deletionQueue, logger: silent });

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // another sweeper, mid-sweep, on a connection of its own
    const other = h.database.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${SWEEP_LOCK_ID})`;
      held();
      await released;
    });
    await holding;
    expect(await sweep()).toEqual({ requeued: [] });
    expect(await deletionQueue.getJob(accountDeletionJobId(lost.deletionId))).toBeUndefined();
    release();
    await other;
    expect(await sweep()).toEqual({ requeued: [lost.deletionId] });

    // two sweeps at once queue it once
    await deletionQueue.obliterate({ force: true });
    const both = await Promise.all([sweep(), sweep()]);
    expect(both.flatMap((outcome) => outcome.requeued)).toEqual([lost.deletionId]);
  });

  it("the schedule's sweep job runs through the worker and a lost deletion ends done", async () => {
    const lost = await accountToDelete(new Date(Date.now() - 5 * 60_000));
    h.start();
    const sweepJob: AccountDeletionJob = { kind: "sweep-account-deletions" };
    await deletionQueue.add("sweep-account-deletions", sweepJob);
    await waitForDeletion(lost.deletionId, "done");
    expect(await studyStatuses()).toEqual(["accountDeleted", "accountDeleted"]);
  });
});
