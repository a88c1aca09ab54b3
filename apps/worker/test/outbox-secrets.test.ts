import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { outgoingMessages, users } from "@studyflow/db";
import { SCHEDULED_EMAIL_TEMPLATE } from "@studyflow/domain/messages";
import {
  DELIVERY_OUTCOME_UNKNOWN,
  MESSAGE_EXPIRED,
  OUTBOX_MAX_ATTEMPTS,
  OUTBOX_SENDING_ABANDONED_AFTER_MS,
} from "@studyflow/domain/outbox";
import { initiatePasswordReset } from "@studyflow/domain/participant-accounts";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runOutboxOnce, type OutboxDeps } from "../src/outbox/outbox-delivery";
import type { Mailer } from "../src/outbox/smtp-mailer";
import { smtpError, startSmtpCapture, type SmtpCapture, type SmtpCaptureOptions } from "./smtp-capture";

const silent = pino({ level: "silent" });
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

/** A token as account-tokens.ts makes them: 43 characters that appear nowhere else by chance. */
const token = (tag: string) => `${tag}-${crypto.randomUUID().replaceAll("-", "")}`;

describe("outbox: one-time secrets leave a message's row when it ends", () => {
  let database: TestDatabase;
  let smtp: SmtpCapture | undefined;
  let now: number;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  beforeEach(async () => {
    now = T0;
    await database.db.delete(outgoingMessages);
  });
  afterEach(async () => {
    await smtp?.close();
    smtp = undefined;
  });
  afterAll(async () => {
    await database.drop();
  });

  const deps = (mailer: Mailer): OutboxDeps => ({ db: database.db, mailer, logger: silent, clock: () => now });

  async function capture(options?: SmtpCaptureOptions) {
    smtp = await startSmtpCapture(options);
    return { smtp, mailer: smtp.mailer };
  }

  async function queue(values: Partial<typeof outgoingMessages.$inferInsert>) {
    const [row] = await database.db
      .insert(outgoingMessages)
      .values({ template: "password-changed", availableAt: new Date(T0), ...values })
      .returning();
    return row!;
  }

  async function row(id: string) {
    const [found] = await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, id));
    return found!;
  }

  /** The whole row as JSON, every column: where a secret must no longer be found. */
  const rowJson = async (id: string) => JSON.stringify(await row(id));

  async function account(email: string) {
    const [made] = await database.db
      .insert(users)
      .values({ email, passwordHash: "unused", preferredLanguage: "en" })
      .returning();
    return made!;
  }

  it("a password reset from the reset request: the mail has the link, the sent row no longer does", async () => {
    const { smtp, mailer } = await capture();
    await account("reset@example.org");
    const issued = await initiatePasswordReset(database.db, {
      email: "reset@example.org",
      now: new Date(),
      ttlSeconds: 2 * 3600,
      resetUrl: "https://studyflow.example/reset-password",
    });
    now = Date.now() + 1_000;
    const [queued] = await database.db.select().from(outgoingMessages);
    expect(JSON.stringify(queued)).toContain(issued!.token);

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 1, sent: 1 });

    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]!.text).toContain(`token=${issued!.token}`);
    expect(smtp.received[0]!.html).toContain(`token=${issued!.token}`);
    expect(await rowJson(queued!.id)).not.toContain(issued!.token);
    // what an operator reads of the history stays
    expect(await row(queued!.id)).toMatchObject({
      template: "password-reset",
      toAddress: "reset@example.org",
      status: "sent",
      sentAt: new Date(now),
      attempts: 1,
      lastError: null,
      payload: { validForHours: 2 },
    });
  });

  it("every kind of secret is sent, then gone from its sent row; what is no secret stays", async () => {
    const { smtp, mailer } = await capture();
    const reader = await account("reader@example.org");
    const verify = token("verify");
    const change = token("change");
    const scheduled = token("login");
    const code = "730519";
    const rows = {
      verify: await queue({
        template: "verify-email",
        toAddress: "new@example.org",
        payload: { verifyUrl: `https://studyflow.example/verify?token=${verify}`, validForHours: 24 },
      }),
      change: await queue({
        template: "email-change-verify",
        toAddress: "changed@example.org",
        payload: { verifyUrl: `https://studyflow.example/verify?token=${change}`, validForHours: 24 },
      }),
      otp: await queue({
        template: "otp-code",
        toAddress: "otp@example.org",
        payload: { code, validForMinutes: 10 },
      }),
      scheduled: await queue({
        template: SCHEDULED_EMAIL_TEMPLATE,
        userId: reader.id,
        payload: {
          scheduleId: "s-1",
          messageType: "reminder",
          subject: "Your weekly survey",
          html: `<p><a href="https://studyflow.example/survey?token=${scheduled}">Take part</a></p>`,
        },
      }),
      requested: await queue({
        template: "email-change-requested",
        toAddress: "old@example.org",
        payload: { newEmail: "changed@example.org" },
      }),
      attempt: await queue({
        template: "signup-attempt",
        toAddress: "taken@example.org",
        payload: { resetUrl: "https://studyflow.example/reset-password" },
      }),
    };

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ claimed: 6, sent: 6 });

    const mailTo = (address: string) => {
      const [mail] = smtp.mailsTo(address);
      return `${mail!.subject}\n${mail!.text}\n${mail!.html}`;
    };
    expect(mailTo("new@example.org")).toContain(verify);
    expect(mailTo("changed@example.org")).toContain(change);
    expect(mailTo("otp@example.org")).toContain(code);
    expect(mailTo("reader@example.org")).toContain(scheduled);
    for (const [id, secret] of [
      [rows.verify.id, verify],
      [rows.change.id, change],
      [rows.otp.id, code],
      [rows.scheduled.id, scheduled],
    ] as const) {
      expect({ id, row: await rowJson(id) }).toEqual({ id, row: expect.not.stringContaining(secret) });
    }
    expect((await row(rows.verify.id)).payload).toEqual({ validForHours: 24 });
    expect((await row(rows.otp.id)).payload).toEqual({ validForMinutes: 10 });
    expect((await row(rows.scheduled.id)).payload).toEqual({
      scheduleId: "s-1",
      messageType: "reminder",
      subject: "Your weekly survey",
    });
    expect((await row(rows.requested.id)).payload).toEqual({ newEmail: "changed@example.org" });
    expect((await row(rows.attempt.id)).payload).toEqual({ resetUrl: "https://studyflow.example/reset-password" });
  });

  it("a retried message keeps its secret until it is sent; a message that fails for good loses it", async () => {
    const link = token("reset");
    const { smtp, mailer } = await capture({
      onRcpt: (address) => (address === "full@example.org" ? smtpError(452, "mailbox full") : undefined),
    });
    const retried = await queue({
      template: "password-reset",
      toAddress: "full@example.org",
      payload: { resetUrl: `https://studyflow.example/reset?token=${link}`, validForHours: 2 },
    });
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ retrying: 1 });
    // still to be sent: the link must stay
    expect(await rowJson(retried.id)).toContain(link);

    const last = token("reset");
    const givingUp = await queue({
      template: "password-reset",
      toAddress: "full@example.org",
      attempts: OUTBOX_MAX_ATTEMPTS - 1,
      payload: { resetUrl: `https://studyflow.example/reset?token=${last}`, validForHours: 2 },
    });
    await database.db.delete(outgoingMessages).where(eq(outgoingMessages.id, retried.id));
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ failed: 1 });
    expect(await row(givingUp.id)).toMatchObject({
      status: "failed",
      attempts: OUTBOX_MAX_ATTEMPTS,
      lastError: expect.stringMatching(/^gave up after 8 attempts: .*452/),
      payload: { validForHours: 2 },
    });
    expect(await rowJson(givingUp.id)).not.toContain(last);

    // undeliverable at once (no recipient): failed, and the code gone with it
    const code = "604182";
    const orphan = await queue({ template: "otp-code", payload: { code, validForMinutes: 10 } });
    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ failed: 1 });
    expect(await row(orphan.id)).toMatchObject({ status: "failed", lastError: expect.stringMatching(/^no recipient/) });
    expect(await rowJson(orphan.id)).not.toContain(code);
    expect(smtp.received).toEqual([]);
  });

  it("an expired message and one abandoned while sending lose their secrets as they end", async () => {
    const { smtp, mailer } = await capture();
    const code = "281946";
    const expired = await queue({
      template: "otp-code",
      toAddress: "late@example.org",
      payload: { code, validForMinutes: 10 },
      expiresAt: new Date(T0 - 1),
    });
    const link = token("verify");
    const abandoned = await queue({
      template: "verify-email",
      toAddress: "lost@example.org",
      status: "sending",
      attempts: 1,
      availableAt: new Date(T0 - OUTBOX_SENDING_ABANDONED_AFTER_MS - 1_000),
      payload: { verifyUrl: `https://studyflow.example/verify?token=${link}`, validForHours: 24 },
    });
    expect(await rowJson(expired.id)).toContain(code);

    expect(await runOutboxOnce(deps(mailer))).toMatchObject({ expired: 1, abandoned: 1, claimed: 0 });

    expect(await row(expired.id)).toMatchObject({
      status: "expired",
      lastError: MESSAGE_EXPIRED,
      toAddress: "late@example.org",
      payload: { validForMinutes: 10 },
    });
    expect(await rowJson(expired.id)).not.toContain(code);
    expect(await row(abandoned.id)).toMatchObject({
      status: "failed",
      lastError: DELIVERY_OUTCOME_UNKNOWN,
      payload: { validForHours: 24 },
    });
    expect(await rowJson(abandoned.id)).not.toContain(link);
    expect(smtp.connections()).toBe(0);
  });
});
