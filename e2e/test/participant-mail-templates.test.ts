import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, users } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { startMailbox, type CapturedMail, type Mailbox } from "./fixtures/tekenradar/mailbox";

/**
 * A Dutch deployment's participant mails: global e-mail templates saved through case-admin's
 * routes, sign-up, code and reset triggered through the participant API, and the mails the
 * worker's outbox delivers to a real SMTP server read for their subject, body and language.
 */

const INSTANCE_ID = "tekenradar";
const PASSWORD = "Tick-season-2026-dunes";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** The Subject header, unfolded, its encoded words (RFC 2047) decoded. */
function subjectOf(mail: CapturedMail): string {
  const head = mail.text.slice(0, mail.text.search(/\r?\n\r?\n/)).replace(/\r?\n[ \t]+/g, " ");
  const line = /^Subject: (.*)$/im.exec(head)?.[1] ?? "";
  return line
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi, (_all, kind: string, data: string) =>
      kind.toLowerCase() === "b"
        ? Buffer.from(data, "base64").toString("utf8")
        : Buffer.from(
            data
              .replace(/_/g, " ")
              .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            "latin1",
          ).toString("utf8"),
    )
    .trim();
}

/** The token of the first link `…?token=` in a mail. */
function linkToken(mail: CapturedMail): string {
  const match = /[?&]token=([A-Za-z0-9_.~-]+)/.exec(mail.text.slice(mail.text.search(/\r?\n\r?\n/)));
  if (!match) throw new Error(`no link token in ${mail.text.slice(0, 1500)}`);
  return match[1]!;
}

/** A subject that gives nothing away: no six digits in a row, no token-like run. */
function expectNoSecret(subject: string) {
  expect(subject).not.toMatch(/\d{6}/);
  expect(subject).not.toMatch(/[A-Za-z0-9_-]{20,}/);
  expect(subject).not.toMatch(/https?:/);
}

describe("participant mails from the instance's global e-mail templates", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let mailbox: Mailbox;
  let admin: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    mailbox = await startMailbox();
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-mail-templates-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir, INSTANCE_ID, TRUST_PROXY: "0" } });
    worker = startWorkerBesideApi(t, resultDir, {
      mail: { smtpUrl: mailbox.url, from: "Tekenradar <no-reply@tekenradar.test>", pollIntervalMs: 100 },
    });
    admin = await mintManagementToken({
      now: Date.now(),
      subject: "root",
      isAdmin: true,
      secret: t.config.MANAGEMENT_JWT_SECRET,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await mailbox?.close();
  });

  /** A request as the front ends send it: JSON as text/plain. */
  async function call(method: string, pathname: string, body?: unknown, token?: string) {
    const response = await t.app.request(pathname, {
      method,
      headers: {
        "content-type": "text/plain;charset=UTF-8",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** Saves a global template as case-admin's editor does (POST, `id` to replace). */
  async function saveTemplate(
    messageType: string,
    defaultLanguage: string,
    translations: { lang: string; subject: string; body: string }[],
    headerOverrides: { from?: string; replyTo?: string[] } | null = null,
  ) {
    const answer = await call(
      "POST",
      "/v1/messaging/email-templates/global-templates",
      {
        ...(ids[messageType] ? { id: ids[messageType] } : {}),
        messageType,
        defaultLanguage,
        headerOverrides,
        translations: translations.map(({ lang, subject, body }) => ({ lang, subject, templateDef: b64(body) })),
      },
      admin,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    ids[messageType] = (answer.body.template as { id: string }).id;
  }

  async function signUp(email: string, preferredLanguage: string) {
    const answer = await call("POST", "/v1/auth/signup", {
      email,
      password: PASSWORD,
      infoCheck: "",
      preferredLanguage,
      instanceID: INSTANCE_ID,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // sign-up answers no session; the participant app signs in right after
    const login = await call("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    return (login.body.token as { accessToken: string }).accessToken;
  }

  const address = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 8)}@example.nl`;

  it("saves the deployment's templates through case-admin's route", async () => {
    await saveTemplate("registration", "nl", [
      {
        lang: "nl",
        subject: "Tekenradar: bevestig je e-mailadres",
        body: '<p>Welkom bij Tekenradar. <a href="https://tekenradar.test/nl/verify?token={{.token}}">Bevestig</a> (taal: {{.language}})</p>',
      },
      {
        lang: "en",
        subject: "Tekenradar: confirm your e-mail address",
        body: '<p>Welcome to Tekenradar. <a href="https://tekenradar.test/en/verify?token={{.token}}">Confirm</a> (language: {{.language}})</p>',
      },
    ]);
    await saveTemplate("verification-code", "nl", [
      {
        lang: "nl",
        subject: "Tekenradar: je verificatiecode",
        body: "<p>Je code is <b>{{.verificationCode}}</b>.</p>",
      },
      {
        lang: "en",
        subject: "Tekenradar: your verification code",
        body: "<p>Your code is <b>{{.verificationCode}}</b>.</p>",
      },
    ]);
    await saveTemplate(
      "password-reset",
      "nl",
      [
        {
          lang: "nl",
          subject: "Tekenradar: wachtwoord opnieuw instellen",
          body: '<p><a href="https://tekenradar.test/nl/reset?token={{.token}}">Nieuw wachtwoord</a>, {{.validUntil}} uur geldig.</p>',
        },
      ],
      { from: "Tekenradar Helpdesk <helpdesk@tekenradar.test>", replyTo: ["vragen@tekenradar.test"] },
    );
    const listed = await call("GET", "/v1/messaging/participant-mail-types", undefined, admin);
    expect(listed.status).toBe(200);
    const types = listed.body.types as { messageType: string; template: { languages: string[] } | null }[];
    expect(types.find((type) => type.messageType === "registration")?.template?.languages).toEqual(["nl", "en"]);
    expect(types.find((type) => type.messageType === "password-changed")?.template).toBeNull();
  });

  it("sign-up: the registration template in the participant's language, with a token that confirms", async () => {
    const dutch = address("nl");
    const english = address("en");
    await signUp(dutch, "nl");
    await signUp(english, "en");
    const toDutch = await mailbox.waitFor(dutch, () => true);
    const toEnglish = await mailbox.waitFor(english, () => true);

    expect(subjectOf(toDutch)).toBe("Tekenradar: bevestig je e-mailadres");
    expect(toDutch.text).toContain("Welkom bij Tekenradar");
    expect(toDutch.text).toContain("(taal: nl)");
    expect(toDutch.text).toContain("https://tekenradar.test/nl/verify?token=");
    expect(subjectOf(toEnglish)).toBe("Tekenradar: confirm your e-mail address");
    expect(toEnglish.text).toContain("(language: en)");
    // nothing of studyflow's own mail; a template without header overrides sends as the deployment
    expect(toDutch.text).not.toMatch(/studyflow/i);
    expect(toDutch.text).toMatch(/^From: Tekenradar <no-reply@tekenradar\.test>$/m);

    const verified = await call("POST", "/v1/auth/verify-email", { token: linkToken(toDutch) });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const [account] = await t.database.db.select().from(users).where(eq(users.email, dutch));
    expect(account?.accountConfirmedAt).not.toBeNull();
  });

  it("a language without a translation gets the template's default language", async () => {
    const german = address("de");
    await signUp(german, "de");
    const mail = await mailbox.waitFor(german, () => true);
    expect(subjectOf(mail)).toBe("Tekenradar: bevestig je e-mailadres");
    // `.language` is the participant's, as case-backend passes it
    expect(mail.text).toContain("(taal: de)");
  });

  it("sign-in code: the verification-code template, the code in the body and never in the subject", async () => {
    const dutch = address("otp-nl");
    const english = address("otp-en");
    const dutchToken = await signUp(dutch, "nl");
    const englishToken = await signUp(english, "en");
    await mailbox.waitFor(dutch, () => true);
    await mailbox.waitFor(english, () => true);
    const before = mailbox.mails.length;

    const askDutch = await call("GET", "/v1/auth/otp?type=email", undefined, dutchToken);
    expect(askDutch.status, JSON.stringify(askDutch.body)).toBe(200);
    expect((await call("GET", "/v1/auth/otp?type=email", undefined, englishToken)).status).toBe(200);
    const toDutch = await mailbox.waitFor(dutch, () => true, before);
    const toEnglish = await mailbox.waitFor(english, () => true, before);

    expect(subjectOf(toDutch)).toBe("Tekenradar: je verificatiecode");
    expect(subjectOf(toEnglish)).toBe("Tekenradar: your verification code");
    const code = /Je code is <b>(\d{6})<\/b>/.exec(toDutch.text)?.[1];
    expect(code).toBeDefined();
    const verified = await call("POST", "/v1/auth/otp/verify", { code }, dutchToken);
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expectNoSecret(subjectOf(toDutch));
    expectNoSecret(subjectOf(toEnglish));
  });

  it("password reset from the template (default language), then password-changed as the built-in mail", async () => {
    const english = address("reset");
    await signUp(english, "en");
    await mailbox.waitFor(english, () => true);
    const before = mailbox.mails.length;

    const initiated = await call("POST", "/v1/password-reset/initiate", { email: english, instanceID: INSTANCE_ID });
    expect(initiated.status).toBe(200);
    const reset = await mailbox.waitFor(english, () => true, before);
    expect(subjectOf(reset)).toBe("Tekenradar: wachtwoord opnieuw instellen");
    expect(reset.text).toMatch(/Nieuw wachtwoord<\/a>, \d+ uur geldig/);
    // the template's sender headers (headerOverrides), where the other mails have the deployment's
    const head = reset.text.slice(0, reset.text.search(/\r?\n\r?\n/));
    expect(head).toMatch(/^From: Tekenradar Helpdesk <helpdesk@tekenradar\.test>$/m);
    expect(head).toMatch(/^Reply-To: vragen@tekenradar\.test$/m);
    expectNoSecret(subjectOf(reset));

    const done = await call("POST", "/v1/password-reset/reset", {
      token: linkToken(reset),
      newPassword: "Another-tick-season-2027",
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    // no password-changed template: studyflow's own mail, in English, with a neutral subject
    const changed = await mailbox.waitFor(english, () => true, mailbox.mails.indexOf(reset) + 1);
    expect(subjectOf(changed)).toBe("Your password was changed");
    expect(changed.text).not.toMatch(/studyflow/i);
  });

  it("every sent row has lost its token and code; no mail's subject holds one", async () => {
    // a mail is in the mailbox a moment before its row is recorded sent
    let rows = await t.database.db.select().from(outgoingMessages);
    for (let waited = 0; rows.some((row) => row.status !== "sent") && waited < 100; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = await t.database.db.select().from(outgoingMessages);
    }
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.status).toBe("sent");
      expect(row.payload).not.toHaveProperty("verifyUrl");
      expect(row.payload).not.toHaveProperty("resetUrl");
      expect(row.payload).not.toHaveProperty("code");
      expect(row.payload).not.toHaveProperty("html");
    }
    for (const mail of mailbox.mails) expectNoSecret(subjectOf(mail));
  });

  it("a template that fails for the recipient's values gives way to the built-in mail, and says so on the row", async () => {
    // Fails only with a code (a 6-character string has no 11th byte); the check on save, with no
    // values, never enters the branch.
    await saveTemplate("verification-code", "nl", [
      {
        lang: "nl",
        subject: "Tekenradar: je verificatiecode",
        body: "<p>Je code is {{if .verificationCode}}{{index .verificationCode 10}}{{end}}</p>",
      },
    ]);
    const dutch = address("bomb");
    const token = await signUp(dutch, "nl");
    await mailbox.waitFor(dutch, () => true);
    const before = mailbox.mails.length;

    expect((await call("GET", "/v1/auth/otp?type=email", undefined, token)).status).toBe(200);
    const mail = await mailbox.waitFor(dutch, () => true, before);
    expect(subjectOf(mail)).toBe("Your verification code");
    expect(mail.text).toMatch(/Your verification code is \d{6}/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [row] = await t.database.db
      .select()
      .from(outgoingMessages)
      .where(eq(outgoingMessages.template, "otp-code"))
      .orderBy(desc(outgoingMessages.createdAt))
      .limit(1);
    expect(row?.status).toBe("sent");
    expect(row?.lastError).toMatch(
      /built-in mail sent: global template "verification-code" \(lang "nl"\) could not be rendered: .*index out of range/,
    );
  });
});
