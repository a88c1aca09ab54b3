import { Queue } from "bullmq";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  accountDeletions,
  auditLog,
  confidentialResponses,
  outgoingMessages,
  participantSessions,
  reports,
  users,
} from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { claimDueMessages, expireOverdueMessages, markMessageSent, prepareMail } from "@studyflow/domain/outbox";
import {
  ACCOUNT_DELETED_MAIL_TTL_MS,
  requestAccountDeletion,
  runAccountDeletion,
} from "@studyflow/domain/participant-accounts";
import { confidentialIdOf } from "@studyflow/domain/participants";
import { ACCOUNT_DELETION_QUEUE, accountDeletionJobId } from "@studyflow/queue";
import {
  STRONG_PASSWORD,
  bearer,
  call,
  caseLeaveRule,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

const rules = [onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes"))), caseLeaveRule("left", "yes")];

const del = (t: TestApp, token: string | undefined, body?: unknown, contentType = "text/plain;charset=UTF-8") =>
  t.app.request("/v1/user", {
    method: "DELETE",
    headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { "content-type": contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("DELETE /v1/user and the deletion task", () => {
  let t: TestApp;
  let studyA: Awaited<ReturnType<typeof setupStudy>>;
  let studyB: Awaited<ReturnType<typeof setupStudy>>;
  let queue: Queue;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    studyA = await setupStudy(t, { key: "study-a", rules });
    studyB = await setupStudy(t, { key: "study-b", rules });
    queue = new Queue(ACCOUNT_DELETION_QUEUE, { connection: t.deps.redis, prefix: t.config.QUEUE_PREFIX });
  });
  afterAll(async () => {
    await queue.close();
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from reports`;
    await t.database.sql`delete from confidential_responses`;
  });

  /** A user with two profiles, each a participant of both studies, with a confidential response each. */
  async function enrolledUser() {
    const user = await participantUser(t, ["main", "child"]);
    for (const study of [studyA, studyB]) {
      for (const profile of user.profiles) {
        const res = await postJson(
          t,
          `/v1/study-service/events/${study.key}/enter`,
          { profileID: profile.id },
          user.token,
        );
        expect(res.status).toBe(200);
        await t.database.db.insert(confidentialResponses).values({
          studyKey: study.key,
          confidentialId: confidentialIdOf(study.secret, participantIdOf(study, profile.id)),
          key: "contact",
          responses: [{ key: "contact", response: { key: "email", value: "me@example.org" } }],
        });
      }
    }
    return user;
  }

  /** A session signed into with the password `ageSeconds` ago and a token of it. */
  async function sessionToken(user: Awaited<ReturnType<typeof participantUser>>, ageSeconds: number) {
    const [session] = await t.database.db
      .insert(participantSessions)
      .values({
        userId: user.user.id,
        createdAt: new Date(NOW - ageSeconds * 1000),
        identityProvenAt: new Date(NOW - ageSeconds * 1000),
        expiresAt: new Date(NOW + 86_400_000),
      })
      .returning();
    const [current] = await t.database.db.select().from(users).where(eq(users.id, user.user.id));
    return mintParticipantToken({
      userId: user.user.id,
      tokenVersion: current!.tokenVersion,
      secret: t.config.PARTICIPANT_JWT_SECRET,
      sessionId: session!.id,
      now: NOW,
    });
  }

  const deletionOf = async (userId: string) =>
    (await t.database.db.select().from(accountDeletions).where(eq(accountDeletions.userId, userId)))[0];

  it("401 without a recent sign-in or the password; a wrong password is 401 too, nothing changes", async () => {
    const user = await enrolledUser();
    expect((await del(t, undefined, {})).status).toBe(401);
    const noSid = await del(t, user.token, {});
    expect(noSid.status).toBe(401);
    expect(((await noSid.json()) as { error: string }).error).toMatch(/sign in again/);
    const old = await sessionToken(user, 2 * 3_600);
    expect((await del(t, old, { exitSurveyResponse: null })).status).toBe(401);
    expect((await del(t, user.token, { password: "not-the-password-at-all" })).status).toBe(401);
    expect(await deletionOf(user.user.id)).toBeUndefined();
    const [row] = await t.database.db.select().from(users).where(eq(users.id, user.user.id));
    expect(row?.deletionRequestedAt).toBeNull();
  });

  it("a recent sign-in suffices (empty body); the request signs out everywhere and queues the task", async () => {
    const user = await enrolledUser();
    const recent = await sessionToken(user, 10 * 60);
    const res = await t.app.request("/v1/user", { method: "DELETE", headers: bearer(recent) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "user deleted" });
    // every token is dead at once
    expect((await del(t, recent, {})).status).toBe(401);
    expect((await del(t, user.token, { password: STRONG_PASSWORD })).status).toBe(401);
    const sessions = await t.database.db
      .select()
      .from(participantSessions)
      .where(eq(participantSessions.userId, user.user.id));
    expect(sessions.every((session) => session.revokedReason === "account-deleted")).toBe(true);
    const deletion = await deletionOf(user.user.id);
    expect(deletion?.status).toBe("pending");
    const job = await queue.getJob(accountDeletionJobId(deletion!.id));
    expect(job?.data).toEqual({ kind: "delete-account", deletionId: deletion!.id });
  });

  it("the task: LEAVE rules ran for each participant, accountDeleted, confidential gone, account gone, audit without e-mail", async () => {
    const user = await enrolledUser();
    const res = await del(t, user.token, { password: STRONG_PASSWORD });
    expect(res.status).toBe(200);
    const deletion = (await deletionOf(user.user.id))!;
    const outcome = await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW });
    expect(outcome).toEqual({ status: "done", profiles: 2, studies: 2, participants: 4 });

    for (const study of [studyA, studyB]) {
      for (const profile of user.profiles) {
        const participant = await readParticipant(t.database.db, study.key, participantIdOf(study, profile.id));
        expect(participant?.studyStatus).toBe("accountDeleted");
        expect(participant?.flags).toMatchObject({ left: "yes", entered: "yes" });
      }
    }
    const goodbyes = await t.database.db.select().from(reports).where(eq(reports.key, "goodbye"));
    expect(goodbyes).toHaveLength(4);
    expect(await t.database.db.select().from(confidentialResponses)).toHaveLength(0);
    expect(await t.database.db.select().from(users).where(eq(users.id, user.user.id))).toHaveLength(0);
    expect((await deletionOf(user.user.id))?.status).toBe("done");
    const [audit] = await t.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "participant-user.delete"), eq(auditLog.target, user.user.id)));
    expect(audit?.details).toMatchObject({ profiles: 2, studies: 2, participants: 4 });
    const trail = JSON.stringify(await t.database.db.select().from(auditLog).where(eq(auditLog.target, user.user.id)));
    expect(trail).not.toContain(user.user.email);
    expect(trail).not.toContain("@");
    // a second run finds nothing to do
    expect((await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW })).status).toBe("gone");
  });

  it("a run killed between participants resumes: nothing skipped, nothing done twice", async () => {
    const user = await enrolledUser();
    expect((await del(t, user.token, { password: STRONG_PASSWORD })).status).toBe(200);
    const deletion = (await deletionOf(user.user.id))!;
    const crash = new Error("worker killed");
    await expect(
      runAccountDeletion(
        t.database.db,
        deletion.id,
        { clock: () => NOW },
        {
          onParticipantDone: (done) => {
            if (done === 2) throw crash;
          },
        },
      ),
    ).rejects.toBe(crash);
    const halfway = (await deletionOf(user.user.id))!;
    expect(halfway.progress.done).toHaveLength(2);
    expect(await t.database.db.select().from(reports).where(eq(reports.key, "goodbye"))).toHaveLength(2);
    expect(await t.database.db.select().from(users).where(eq(users.id, user.user.id))).toHaveLength(1);

    const seen: number[] = [];
    const outcome = await runAccountDeletion(
      t.database.db,
      deletion.id,
      { clock: () => NOW },
      {
        onParticipantDone: (done) => {
          seen.push(done);
        },
      },
    );
    expect(seen).toEqual([3, 4]);
    expect(outcome.participants).toBe(4);
    expect(await t.database.db.select().from(reports).where(eq(reports.key, "goodbye"))).toHaveLength(4);
    const leftFlags = await t.database.sql<{ n: number }[]>`
      select count(*)::int as n from participants where study_status = 'accountDeleted'`;
    expect(leftFlags[0]?.n).toBe(4);
  });

  it("asking twice answers the same deletion", async () => {
    const user = await enrolledUser();
    const token = await sessionToken(user, 60);
    expect((await del(t, token, {})).status).toBe(200);
    const first = await deletionOf(user.user.id);
    // a new token of the old version is refused: the account's sessions are over
    expect((await del(t, token, {})).status).toBe(401);
    expect((await deletionOf(user.user.id))?.id).toBe(first?.id);
  });

  describe('the "account deleted" mail', () => {
    const mailsTo = async (address: string) =>
      t.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.toAddress, address));

    it("queued in the deletion's last step to the address the account had, without its id; earlier mails go", async () => {
      const user = await enrolledUser();
      await t.database.db.update(users).set({ preferredLanguage: "de" }).where(eq(users.id, user.user.id));
      // an earlier mail of the account (a reset link's notice) holds its address and id
      await t.database.db
        .insert(outgoingMessages)
        .values({ template: "password-changed", toAddress: user.user.email, userId: user.user.id, status: "sent" });
      const deletion = (await requestAccountDeletion(t.database.db, { userId: user.user.id, now: new Date(NOW) }))
        .deletion;

      // a run that dies before the last step queues nothing: the account is still there
      await expect(
        runAccountDeletion(
          t.database.db,
          deletion.id,
          { clock: () => NOW },
          {
            onParticipantDone: () => {
              throw new Error("worker killed");
            },
          },
        ),
      ).rejects.toThrow("worker killed");
      expect((await mailsTo(user.user.email)).map((mail) => mail.template)).toEqual(["password-changed"]);

      await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW });
      const mails = await mailsTo(user.user.email);
      expect(mails).toHaveLength(1);
      const [mail] = mails;
      expect(mail).toMatchObject({
        template: "account-deleted",
        userId: null,
        studyKey: null,
        confidentialId: null,
        language: "de",
        payload: {},
        status: "pending",
      });
      expect(mail!.expiresAt?.getTime()).toBe(NOW + ACCOUNT_DELETED_MAIL_TTL_MS);
      expect(
        await t.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.userId, user.user.id)),
      ).toHaveLength(0);

      // rendered without an account (it is gone), in the account's language
      const prepared = await prepareMail(t.database.db, mail!, new Date());
      expect(prepared.to).toBe(user.user.email);
      expect(prepared.subject).toBe("Ihr Konto wurde gelöscht");
      expect(prepared.text).toContain("gelöscht");
      expect(prepared.html).toMatch(/^<!doctype html>/);

      // a second run of the finished deletion queues no second mail
      await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW });
      expect(await mailsTo(user.user.email)).toHaveLength(1);
    });

    it("the row forgets the address once sent (or expired); other mails keep theirs", async () => {
      const user = await enrolledUser();
      const other = await t.database.db
        .insert(outgoingMessages)
        .values({ template: "password-changed", toAddress: "someone-else@example.org" })
        .returning();
      const deletion = (await requestAccountDeletion(t.database.db, { userId: user.user.id, now: new Date(NOW) }))
        .deletion;
      await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW });
      const [queued] = await mailsTo(user.user.email);
      expect(queued).toBeDefined();

      // the app's clock is fixed in the past; the rows are due at it
      await t.database.db.update(outgoingMessages).set({ availableAt: new Date(NOW) });
      const claimed = await claimDueMessages(t.database.db, { now: new Date(NOW), limit: 50 });
      expect(claimed.map((row) => row.id)).toEqual(expect.arrayContaining([queued!.id, other[0]!.id]));
      for (const row of claimed) await markMessageSent(t.database.db, row.id, new Date(NOW));
      const [sent] = await t.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, queued!.id));
      expect(sent).toMatchObject({ status: "sent", toAddress: null, template: "account-deleted" });
      const [otherSent] = await t.database.db
        .select()
        .from(outgoingMessages)
        .where(eq(outgoingMessages.id, other[0]!.id));
      expect(otherSent?.toAddress).toBe("someone-else@example.org");

      // one never delivered expires after a day, and its address goes with the expiry
      const late = await enrolledUser();
      const lateDeletion = (await requestAccountDeletion(t.database.db, { userId: late.user.id, now: new Date(NOW) }))
        .deletion;
      await runAccountDeletion(t.database.db, lateDeletion.id, { clock: () => NOW });
      const [pending] = await mailsTo(late.user.email);
      expect(await expireOverdueMessages(t.database.db, new Date(NOW + ACCOUNT_DELETED_MAIL_TTL_MS - 1))).toEqual([]);
      expect(await expireOverdueMessages(t.database.db, new Date(NOW + ACCOUNT_DELETED_MAIL_TTL_MS))).toEqual([
        pending!.id,
      ]);
      const [expired] = await t.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, pending!.id));
      expect(expired).toMatchObject({ status: "expired", toAddress: null });
    });

    it("no mail to a placeholder address (an external identity without a usable e-mail)", async () => {
      const user = await participantUser(t, ["main"], `external-${"a".repeat(40)}@external.invalid`);
      const deletion = (await requestAccountDeletion(t.database.db, { userId: user.user.id, now: new Date(NOW) }))
        .deletion;
      expect((await runAccountDeletion(t.database.db, deletion.id, { clock: () => NOW })).status).toBe("done");
      expect(await mailsTo(user.user.email)).toHaveLength(0);
    });
  });

  it("400 for a malformed exit survey response, naming the field", async () => {
    const user = await enrolledUser();
    const res = await del(t, user.token, { password: STRONG_PASSWORD, exitSurveyResponse: { key: 5 } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/exitSurveyResponse/);
  });
});
