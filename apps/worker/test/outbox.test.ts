import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialIdMap, createDb, outgoingMessages, profiles, users, type DbHandle } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setMessageTemplate } from "@studyflow/domain/messages";
import {
  DELIVERY_OUTCOME_UNKNOWN,
  MESSAGE_EXPIRED,
  OUTBOX_MAX_ATTEMPTS,
  OUTBOX_RETRY_BASE_DELAY_MS,
  OUTBOX_RETRY_MAX_DELAY_MS,
  OUTBOX_SENDING_ABANDONED_AFTER_MS,
} from "@studyflow/domain/outbox";
import { initiatePasswordReset } from "@studyflow/domain/participant-accounts";
import { noTemplateError } from "@studyflow/domain/rules";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { createOutboxProcessor, runOutboxOnce, type OutboxDeps } from "../src/outbox/outbox-delivery";
import { createSmtpMailer, type Mailer } from "../src/outbox/smtp-mailer";
import {
  MAIL_FROM,
  closedSmtpUrl,
  smtpError,
  startSmtpCapture,
  type SmtpCapture,
  type SmtpCaptureOptions,
} from "./smtp-capture";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const silent = pino({ level: "silent" });
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe("outbox delivery over SMTP", () => {
  let database: TestDatabase;
  let smtp: SmtpCapture | undefined;
  let now: number;
  const extraPools: DbHandle[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  beforeEach(async () => {
    now = T0;
    // One database for the file: each test starts from an empty outbox.
    await database.db.delete(outgoingMessages);
  });
  afterEach(async () => {
    await smtp?.close();
    smtp = undefined;
    await Promise.all(extraPools.splice(0).map((pool) => pool.close(1)));
  });
  afterAll(async () => {
    await database.drop();
  });

  function deps(mailer: Mailer, overrides: Partial<OutboxDeps> = {}): OutboxDeps {
    return { db: database.db, mailer, logger: silent, clock: () => now, ...overrides };
  }

  async function capture(options?: SmtpCaptureOptions) {
    smtp = await startSmtpCapture(options);
    return { smtp, mailer: smtp.mailer };
  }

  async function queue(values: Partial<typeof outgoingMessages.$inferInsert> = {}) {
    const [row] = await database.db
      .insert(outgoingMessages)
      .values({ template: "password-changed", availableAt: new Date(T0), ...values })
      .returning();
    return row!;
  }

  async function message(id: string) {
    const [row] = await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, id));
    return row!;
  }

  async function user(email: string, preferredLanguage = "en") {
    const [row] = await database.db
      .insert(users)
      .values({ email, passwordHash: "unused", preferredLanguage })
      .returning();
    return row!;
  }

  /** A weekly-reminder of `studyKey` queued for the participant "conf-1", an account's main profile. */
  async function queueStudyMessage(studyKey: string, email: string, payload: Record<string, string>) {
    const account = await user(email);
    const [profile] = await database.db.insert(profiles).values({ userId: account.id, mainProfile: true }).returning();
    await database.db.insert(confidentialIdMap).values({ studyKey, confidentialId: "conf-1", profileId: profile!.id });
    return queue({ template: "weekly-reminder", studyKey, confidentialId: "conf-1", payload });
  }

  it("delivers a password reset with its link to the account's address, and records it as sent", async () => {
    const { smtp, mailer } = await capture();
    await user("reset-en@example.org");
    const issued = await initiatePasswordReset(database.db, {
      email: "reset-en@example.org",
      now: new Date(),
      ttlSeconds: 2 * 3600,
      resetUrl: "https://studyflow.example/reset-password",
    });
    now = Date.now() + 1_000; // the row was written with the database's clock

    const round = await runOutboxOnce(deps(mailer));

    expect(round).toMatchObject({ claimed: 1, sent: 1, failed: 0, retrying: 0 });
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    const link = `https://studyflow.example/reset-password?token=${issued!.token}`;
    expect(mail!.envelopeTo).toEqual(["reset-en@example.org"]);
    expect(mail!.subject).toBe("Reset your password");
    expect(mail!.text).toContain(link);
    expect(mail!.text).toContain("valid for 2 hours");
    expect(mail!.html).toContain(`href="${link}"`);
    const [row] = await database.db.select().from(outgoingMessages);
    expect(row).toMatchObject({ status: "sent", attempts: 1, lastError: null, sentAt: new Date(now) });
    expect(mail!.messageId).toBe(`<${row!.id}@studyflow.test>`);
  });

  it("writes to a German-speaking account in German", async () => {
    const { smtp, mailer } = await capture();
    const row = await queue({
      template: "password-reset",
      toAddress: "reset-de@example.org",
      language: "de",
      payload: { resetUrl: "https://studyflow.example/reset-password?token=abc", validForHours: 1.5 },
    });

    await runOutboxOnce(deps(mailer));

    const [mail] = smtp.received;
    expect(mail!.subject).toBe("Passwort zurücksetzen");
    expect(mail!.text).toContain("Der Link ist 1,5 Stunden gültig.");
    expect(mail!.text).toContain("https://studyflow.example/reset-password?token=abc");
    expect((await message(row.id)).status).toBe("sent");
  });

  it("retries a refused message after its backoff, recording the first error, and sends it once", async () => {
    const { smtp, mailer } = await capture({
      onData: (attempt) => (attempt === 1 ? smtpError(451, "mailbox busy, try again later") : undefined),
    });
    const row = await queue({ toAddress: "retry@example.org" });

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1, retrying: 1 });
    const afterFirst = await message(row.id);
    expect(afterFirst).toMatchObject({ status: "pending", attempts: 1, sentAt: null });
    expect(afterFirst.lastError).toMatch(/451 mailbox busy, try again later/);
    expect(afterFirst.availableAt).toEqual(new Date(T0 + OUTBOX_RETRY_BASE_DELAY_MS));

    now = T0 + OUTBOX_RETRY_BASE_DELAY_MS - 1;
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 0 });

    now = T0 + OUTBOX_RETRY_BASE_DELAY_MS;
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1, sent: 1 });
    expect(await message(row.id)).toMatchObject({ status: "sent", attempts: 2, sentAt: new Date(now) });
    expect(smtp.received).toHaveLength(1);
  });

  it(`fails a message for good after ${OUTBOX_MAX_ATTEMPTS} refused attempts`, async () => {
    const { smtp, mailer } = await capture({ onRcpt: () => smtpError(450, "recipient mailbox unavailable") });
    const row = await queue({ toAddress: "never@example.org" });

    for (let attempt = 1; attempt <= OUTBOX_MAX_ATTEMPTS; attempt++) {
      expect((await message(row.id)).status).toBe("pending");
      expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1 });
      now += OUTBOX_RETRY_MAX_DELAY_MS;
    }

    const failed = await message(row.id);
    expect(failed).toMatchObject({ status: "failed", attempts: OUTBOX_MAX_ATTEMPTS, sentAt: null });
    expect(failed.lastError).toMatch(new RegExp(`^gave up after ${OUTBOX_MAX_ATTEMPTS} attempts: .*450`));
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 0 });
    expect(smtp.received).toHaveLength(0);
  });

  it("fails a message without a resolvable recipient at once, without any SMTP traffic", async () => {
    const { smtp, mailer } = await capture();
    const nobody = await queue({ payload: {} });
    const goneUser = await queue({ userId: "00000000-0000-4000-8000-000000000000" });
    const unknownParticipant = await queue({ template: "reminder", studyKey: "no-study", confidentialId: "c-404" });

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 3, failed: 3 });

    expect(await message(nobody.id)).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: "no recipient: the message names no address, user or study participant",
    });
    expect((await message(goneUser.id)).lastError).toBe("no recipient: the message's user has no account");
    expect((await message(unknownParticipant.id)).lastError).toBe(
      "no recipient: no account is linked to the participant's confidential id",
    );
    expect(smtp.connections()).toBe(0);
  });

  it("fails a password reset without a usable link at once", async () => {
    const { smtp, mailer } = await capture();
    const row = await queue({ template: "password-reset", toAddress: "a@example.org", payload: { resetUrl: 42 } });
    await runOutboxOnce(deps(mailer));
    expect(await message(row.id)).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: "password-reset message has no valid resetUrl in its payload",
    });
    expect(smtp.connections()).toBe(0);
  });

  it("delivers a study message through the study's template to the user behind the participant's confidential id", async () => {
    const { smtp, mailer } = await capture();
    await createStudy(database.db, { key: "sleep-study" });
    await setMessageTemplate(
      database.db,
      {
        studyKey: "sleep-study",
        messageType: "weekly-reminder",
        language: "en",
        subject: "Weekly reminder",
        body: "Note: {{flags.note}}",
      },
      "test",
      { clock: systemClock },
    );
    const row = await queueStudyMessage("sleep-study", "participant@example.org", {
      "flags.note": "<b>bring your diary</b> & a pen",
      "flags.other": "not-named-0815",
    });

    await runOutboxOnce(deps(mailer));

    expect(await message(row.id)).toMatchObject({ status: "sent", attempts: 1 });
    const [mail] = smtp.received;
    expect(mail!.envelopeTo).toEqual(["participant@example.org"]);
    expect(mail!.subject).toBe("Weekly reminder");
    expect(mail!.text.trimEnd()).toBe("Note: <b>bring your diary</b> & a pen");
    expect(mail!.html).toContain("<p>Note: &lt;b&gt;bring your diary&lt;/b&gt; &amp; a pen</p>");
    expect(mail!.html).not.toContain("<b>bring");
    expect(JSON.stringify(mail)).not.toContain("not-named-0815");
  });

  it("fails a study message whose study has no template for its type at once, without any SMTP traffic", async () => {
    const { smtp, mailer } = await capture();
    await createStudy(database.db, { key: "no-templates" });
    const row = await queueStudyMessage("no-templates", "no-template@example.org", { "flags.note": "x" });

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1, failed: 1, sent: 0 });
    expect(await message(row.id)).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: noTemplateError("no-templates", "weekly-reminder"),
    });
    expect(smtp.connections()).toBe(0);
  });

  it("delivers each message exactly once when two dispatchers race over the same rows", async () => {
    const { smtp } = await capture();
    const rows = await Promise.all(Array.from({ length: 24 }, (_, i) => queue({ toAddress: `race-${i}@example.org` })));
    // Two workers: separate pools and separate SMTP clients, as in two processes.
    const pools = [createDb(database.url, { max: 3 }), createDb(database.url, { max: 3 })];
    extraPools.push(...pools);
    const claimedBy = [0, 0];
    const rounds: number[] = [];
    const drain = async (index: number) => {
      const mailer = createSmtpMailer({ smtpUrl: smtp.url, from: MAIL_FROM });
      for (;;) {
        const round = await runOutboxOnce(deps(mailer, { db: pools[index]!.db, batchSize: 4 }));
        rounds.push(round.claimed);
        claimedBy[index]! += round.claimed;
        if (round.claimed === 0) return;
      }
    };

    await Promise.all([drain(0), drain(1)]);

    expect(Math.max(...rounds)).toBeLessThanOrEqual(4);
    expect(claimedBy.every((count) => count > 0)).toBe(true);
    expect(claimedBy[0]! + claimedBy[1]!).toBe(rows.length);
    expect(smtp.received).toHaveLength(rows.length);
    expect(new Set(smtp.received.map((mail) => mail.messageId)).size).toBe(rows.length);
    const stored = await database.db.select().from(outgoingMessages);
    expect(stored.every((row) => row.status === "sent" && row.attempts === 1)).toBe(true);
  });

  it("fails, and never sends, a message left sending by a stopped worker once it is past the bound", async () => {
    const { smtp, mailer } = await capture();
    const abandoned = await queue({
      toAddress: "abandoned@example.org",
      status: "sending",
      attempts: 1,
      availableAt: new Date(T0 - OUTBOX_SENDING_ABANDONED_AFTER_MS - 1),
    });
    const recent = await queue({
      toAddress: "recent@example.org",
      status: "sending",
      attempts: 1,
      availableAt: new Date(T0 - 60_000),
    });

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ abandoned: 1, claimed: 0 });

    expect(await message(abandoned.id)).toMatchObject({
      status: "failed",
      attempts: 1,
      sentAt: null,
      lastError: DELIVERY_OUTCOME_UNKNOWN,
    });
    expect(await message(recent.id)).toMatchObject({ status: "sending", lastError: null });
    expect(smtp.connections()).toBe(0);
  });

  it("does not retry a message whose server went silent after taking all of it", async () => {
    smtp = await startSmtpCapture({ onData: () => "hang" });
    const mailer = createSmtpMailer({ smtpUrl: smtp.url, from: MAIL_FROM, timeoutMs: 300 });
    const row = await queue({ toAddress: "silent@example.org" });

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1, failed: 1 });

    const failed = await message(row.id);
    expect(failed).toMatchObject({ status: "failed", attempts: 1 });
    expect(failed.lastError).toMatch(/^delivery outcome unknown/);
  });

  it("retries a message whose server could not be reached", async () => {
    const url = await closedSmtpUrl();
    const row = await queue({ toAddress: "later@example.org" });

    const round = await runOutboxOnce(deps(createSmtpMailer({ smtpUrl: url, from: MAIL_FROM })));

    expect(round).toMatchObject({ claimed: 1, retrying: 1 });
    expect(await message(row.id)).toMatchObject({ status: "pending", attempts: 1 });
    expect((await message(row.id)).lastError).toMatch(/ECONNREFUSED/);
  });

  it("loses nothing while the SMTP server refuses connections: each message is retried, then sent once", async () => {
    const url = await closedSmtpUrl();
    const mailer = createSmtpMailer({ smtpUrl: url, from: MAIL_FROM });
    const rows = await Promise.all(
      Array.from({ length: 6 }, (_, i) => queue({ toAddress: `queued-${i}@example.org` })),
    );

    // Three rounds against the refusing server, each after the backoff of the one before.
    for (let round = 1; round <= 3; round++) {
      expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 6, retrying: 6, sent: 0 });
      const pending = await Promise.all(rows.map((row) => message(row.id)));
      for (const row of pending) {
        expect(row).toMatchObject({ status: "pending", attempts: round, sentAt: null });
        expect(row.lastError).toMatch(/ECONNREFUSED/);
      }
      now = Math.max(...pending.map((row) => row.availableAt.getTime()));
    }

    // The server is back on the same address: every message goes out exactly once.
    smtp = await startSmtpCapture({ port: Number(new URL(url).port) });
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 6, sent: 6, retrying: 0 });
    expect(smtp.received.flatMap((mail) => mail.envelopeTo).sort()).toEqual(rows.map((row) => row.toAddress).sort());
    for (const row of rows) expect(await message(row.id)).toMatchObject({ status: "sent", attempts: 4 });
    now += OUTBOX_RETRY_MAX_DELAY_MS;
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 0 });
    expect(smtp.received).toHaveLength(6);
  });

  it("marks a pending message past its expiry expired and never sends it; one still valid is sent", async () => {
    const { smtp, mailer } = await capture();
    const stale = await queue({ toAddress: "late@example.org", expiresAt: new Date(T0 - 1) });
    const fresh = await queue({ toAddress: "on-time@example.org", expiresAt: new Date(T0 + 60_000) });

    const round = await runOutboxOnce(deps(mailer));

    expect(round).toMatchObject({ expired: 1, claimed: 1, sent: 1 });
    expect(smtp.received.map((mail) => mail.envelopeTo)).toEqual([["on-time@example.org"]]);
    expect(await message(stale.id)).toMatchObject({ status: "expired", attempts: 0, lastError: MESSAGE_EXPIRED });
    expect(await message(fresh.id)).toMatchObject({ status: "sent" });
  });

  it("expires a message whose retries ran past its expiry instead of sending it late", async () => {
    const { smtp, mailer } = await capture({
      onRcpt: (_address, attempt) => (attempt === 1 ? smtpError(451, "busy") : undefined),
    });
    const row = await queue({ toAddress: "retry@example.org", expiresAt: new Date(T0 + 10_000) });
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ retrying: 1 });
    now = T0 + 24 * 3_600_000;
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ expired: 1, claimed: 0 });
    expect(smtp.received).toEqual([]);
    expect(await message(row.id)).toMatchObject({ status: "expired", attempts: 1 });
  });

  it("on close, finishes the message in flight and hands back the rest of its batch", async () => {
    let releaseFirst!: () => void;
    const firstArrived = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let proceed!: () => void;
    const gate = new Promise<void>((resolve) => {
      proceed = resolve;
    });
    const { smtp, mailer } = await capture({
      onData: async () => {
        releaseFirst();
        await gate;
        return undefined;
      },
    });
    for (let i = 0; i < 3; i++) await queue({ toAddress: `batch-${i}@example.org` });

    let closing = false;
    const round = createOutboxProcessor({ ...deps(mailer), isClosing: () => closing })(undefined as never);
    await firstArrived;
    closing = true;
    proceed();
    await round;

    expect(smtp.received).toHaveLength(1);
    const stored = await database.db.select().from(outgoingMessages);
    expect(stored.filter((row) => row.status === "sent")).toHaveLength(1);
    expect(stored.filter((row) => row.status === "pending").map((row) => row.attempts)).toEqual([0, 0]);
  });
});

describe("worker runtime with e-mail delivery", () => {
  let harness: WorkerHarness;
  let smtp: SmtpCapture;

  beforeAll(async () => {
    harness = await createWorkerHarness();
    smtp = await startSmtpCapture();
  });
  afterAll(async () => {
    await harness.close();
    await smtp.close();
  });

  it("delivers on the cluster's outbox schedule when SMTP is configured and stops on close", async () => {
    const runtime = harness.start({ mail: { smtpUrl: smtp.url, from: MAIL_FROM, pollIntervalMs: 50 } });
    const [row] = await harness.database.db
      .insert(outgoingMessages)
      .values({ template: "password-changed", toAddress: "changed@example.org", language: "de" })
      .returning();

    const deadline = Date.now() + 10_000;
    while (smtp.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));

    expect(smtp.received.map((mail) => mail.subject)).toEqual(["Ihr Passwort wurde geändert"]);
    expect(await runtime.close(5_000)).toBe("closed");
    const [stored] = await harness.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, row!.id));
    expect(stored).toMatchObject({ status: "sent", attempts: 1 });
  });
});
