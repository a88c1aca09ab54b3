import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialIdMap, createDb, outgoingMessages, profiles, users } from "@studyflow/db";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  OUTBOX_MAX_ATTEMPTS,
  OUTBOX_RETRY_BASE_DELAY_MS,
  OUTBOX_RETRY_MAX_DELAY_MS,
  claimDueMessages,
  markMessageSent,
  outboxRetryDelayMs,
  recordFailedAttempt,
  releaseClaimedMessages,
} from "../src/outbox/outbox-repository";
import { resolveRecipient } from "../src/outbox/resolve-recipient";
import { mailLanguage } from "../src/mail/mail-document";
import { ACCOUNT_DELETED_TEMPLATE } from "../src/participant-accounts/account-message-types";
import { renderMail } from "../src/outbox/templates";
import { UndeliverableMessage } from "../src/mail/undeliverable-message";
import { createStudy } from "../src/study-setup/study-setup";

describe("outbox templates", () => {
  const reset = { resetUrl: "https://studyflow.example/reset?token=abc&x=1", validForHours: 2 };

  it("puts the reset link into the text as it is and into the HTML escaped", () => {
    const mail = renderMail("password-reset", "en", reset);
    expect(mail.subject).toBe("Reset your password");
    expect(mail.text).toContain("https://studyflow.example/reset?token=abc&x=1");
    expect(mail.text).toContain("The link is valid for 2 hours.");
    expect(mail.html).toContain('<a href="https://studyflow.example/reset?token=abc&amp;x=1">');
  });

  it("chooses German for any German language tag and English for everything else", () => {
    expect(mailLanguage("de")).toBe("de");
    expect(mailLanguage("de-AT")).toBe("de");
    expect(mailLanguage("DE_ch")).toBe("de");
    expect(mailLanguage("fr")).toBe("en");
    expect(mailLanguage(null)).toBe("en");
    expect(renderMail("password-reset", "de-AT", { ...reset, validForHours: 1 }).text).toContain(
      "Der Link ist 1 Stunde gültig.",
    );
    expect(renderMail("password-changed", "de", {}).subject).toBe("Ihr Passwort wurde geändert");
    expect(renderMail("password-changed", "pt", {}).subject).toBe("Your password was changed");
  });

  it("refuses a password reset without a usable http(s) link", () => {
    for (const resetUrl of [undefined, 42, "not a url", "javascript:alert(1)"]) {
      expect(() => renderMail("password-reset", "en", { resetUrl })).toThrow(UndeliverableMessage);
    }
  });

  it("omits the validity when the payload does not state it", () => {
    const mail = renderMail("password-reset", "en", { resetUrl: reset.resetUrl });
    expect(mail.text).not.toContain("valid for");
  });

  it("an account mail shows only what it needs from its payload: no flag, linking code or other value", () => {
    const needed: Record<string, Record<string, unknown>> = {
      "password-reset": { resetUrl: "https://studyflow.example/reset?token=t1", validForHours: 2 },
      "password-changed": {},
      "email-change-verify": { verifyUrl: "https://studyflow.example/verify?token=t2", validForHours: 24 },
      "email-change-requested": { newEmail: "new@example.org" },
      [ACCOUNT_DELETED_TEMPLATE]: {},
      "verify-email": { verifyUrl: "https://studyflow.example/verify?token=t3" },
      "signup-attempt": { resetUrl: "https://studyflow.example/reset?token=t4" },
      "otp-code": { code: "482913" },
      "email-changed": { newEmail: "changed@example.org" },
    };
    // what a careless caller (or a row edited by hand) might add: none of it may show
    const extra = {
      studyKey: "lyme-watch-9917",
      "flags.diagnosis": "erythema-migrans-5521",
      "linkingCodes.labId": "LAB-7731-QX",
      "eventData.answer": "answer-0042",
      participantId: "pid-3306",
    };
    for (const [template, payload] of Object.entries(needed)) {
      for (const language of ["en", "de"]) {
        const mail = renderMail(template, language, { ...payload, ...extra });
        const shown = `${mail.subject}\n${mail.text}\n${mail.html}`;
        for (const value of Object.values(extra)) expect(shown, `${template}/${language}`).not.toContain(value);
        expect(shown, `${template}/${language}`).not.toMatch(/flags\.|linkingCodes\.|eventData\./);
      }
    }
  });

  it("renders no study message: a name that is no built-in template is undeliverable, whatever the payload", () => {
    const payload = { "flags.diagnosis": "lyme", "linkingCodes.labId": "LAB-7731-QX", note: "<b>x</b>" };
    for (const name of ["weekly_reminder", "thank-you", "remind\r\nBcc: someone@example.org", " - "]) {
      expect(() => renderMail(name, null, payload), name).toThrow(UndeliverableMessage);
    }
    expect(() => renderMail("weekly_reminder", null, payload)).toThrow(
      'no built-in template "weekly_reminder", and the message names no study to take one from',
    );
    // the name reaches the row's last_error on one line
    expect(() => renderMail("a\r\nb", null, {})).toThrow('no built-in template "a  b"');
  });
});

describe("outbox retry delay", () => {
  it("doubles from the base delay and stops at the cap", () => {
    expect(outboxRetryDelayMs(1)).toBe(OUTBOX_RETRY_BASE_DELAY_MS);
    expect(outboxRetryDelayMs(2)).toBe(2 * OUTBOX_RETRY_BASE_DELAY_MS);
    expect(outboxRetryDelayMs(3)).toBe(4 * OUTBOX_RETRY_BASE_DELAY_MS);
    expect(outboxRetryDelayMs(50)).toBe(OUTBOX_RETRY_MAX_DELAY_MS);
  });
});

describe("outbox repository", () => {
  const T0 = new Date(Date.UTC(2030, 0, 1, 12, 0, 0));
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  beforeEach(async () => {
    await database.db.delete(outgoingMessages);
  });
  afterAll(async () => {
    await database.drop();
  });

  async function queue(count: number, values: Partial<typeof outgoingMessages.$inferInsert> = {}) {
    return database.db
      .insert(outgoingMessages)
      .values(
        Array.from({ length: count }, (_, i) => ({
          template: "password-changed",
          toAddress: `r${i}@example.org`,
          availableAt: T0,
          ...values,
        })),
      )
      .returning();
  }

  async function row(id: string) {
    const [found] = await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.id, id));
    return found!;
  }

  it("claims at most the limit, only due pending rows, and counts the attempt", async () => {
    await queue(7);
    const [later] = await queue(1, { availableAt: new Date(T0.getTime() + 1) });
    const [sent] = await queue(1, { status: "sent" });

    const claimed = await claimDueMessages(database.db, { now: T0, limit: 5 });
    expect(claimed).toHaveLength(5);
    expect(claimed.every((message) => message.status === "sending" && message.attempts === 1)).toBe(true);

    const rest = await claimDueMessages(database.db, { now: T0, limit: 5 });
    expect(rest).toHaveLength(2);
    expect([...claimed, ...rest].map((message) => message.id)).not.toContain(later!.id);
    expect((await row(sent!.id)).status).toBe("sent");
  });

  it("gives concurrent claims disjoint rows", async () => {
    await queue(30);
    const pools = [createDb(database.url, { max: 1 }), createDb(database.url, { max: 1 }), createDb(database.url)];
    try {
      const claims = await Promise.all(pools.map((pool) => claimDueMessages(pool.db, { now: T0, limit: 8 })));
      const ids = claims.flat().map((message) => message.id);
      expect(claims.every((claim) => claim.length <= 8)).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(24);
    } finally {
      await Promise.all(pools.map((pool) => pool.close(1)));
    }
  });

  it("puts a failed attempt back after its backoff and fails the last one", async () => {
    const [message] = await queue(1);
    const [claimed] = await claimDueMessages(database.db, { now: T0, limit: 1 });
    expect(await recordFailedAttempt(database.db, claimed!, "451 busy", T0)).toBe("retry");
    expect(await row(message!.id)).toMatchObject({
      status: "pending",
      attempts: 1,
      lastError: "451 busy",
      availableAt: new Date(T0.getTime() + OUTBOX_RETRY_BASE_DELAY_MS),
    });

    await database.db
      .update(outgoingMessages)
      .set({ status: "sending", attempts: OUTBOX_MAX_ATTEMPTS })
      .where(eq(outgoingMessages.id, message!.id));
    const last = { id: message!.id, attempts: OUTBOX_MAX_ATTEMPTS };
    expect(await recordFailedAttempt(database.db, last, "451 busy", T0)).toBe("failed");
    expect(await row(message!.id)).toMatchObject({
      status: "failed",
      lastError: `gave up after ${OUTBOX_MAX_ATTEMPTS} attempts: 451 busy`,
    });
  });

  it("moves only claimed rows on, and hands back untried ones without counting them", async () => {
    const [pending] = await queue(1);
    await markMessageSent(database.db, pending!.id, T0);
    expect((await row(pending!.id)).status).toBe("pending");

    const [claimed] = await claimDueMessages(database.db, { now: T0, limit: 1 });
    await releaseClaimedMessages(database.db, [claimed!.id]);
    expect(await row(claimed!.id)).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("resolves the recipient from the address, the user, or the participant's confidential id", async () => {
    const [account] = await database.db
      .insert(users)
      .values({ email: "resolve@example.org", passwordHash: "unused", preferredLanguage: "de" })
      .returning();
    const [profile] = await database.db.insert(profiles).values({ userId: account!.id }).returning();
    await createStudy(database.db, { key: "resolve-study" });
    await database.db
      .insert(confidentialIdMap)
      .values({ studyKey: "resolve-study", confidentialId: "conf-9", profileId: profile!.id });
    const none = { toAddress: null, userId: null, studyKey: null, confidentialId: null, language: null };

    expect(await resolveRecipient(database.db, { ...none, toAddress: "direct@example.org", language: "en" })).toEqual({
      address: "direct@example.org",
      language: "en",
    });
    expect(await resolveRecipient(database.db, { ...none, userId: account!.id })).toEqual({
      address: "resolve@example.org",
      language: "de",
    });
    expect(
      await resolveRecipient(database.db, {
        ...none,
        studyKey: "resolve-study",
        confidentialId: "conf-9",
        language: "en",
      }),
    ).toEqual({
      address: "resolve@example.org",
      language: "en",
      // the profile behind the confidential id, for the study's CASE template values
      profile: { userId: account!.id, profileId: profile!.id, alias: profile!.alias },
    });
    expect(await resolveRecipient(database.db, { ...none, studyKey: "resolve-study", confidentialId: "other" })).toBe(
      null,
    );
    expect(await resolveRecipient(database.db, none)).toBe(null);
  });
});
