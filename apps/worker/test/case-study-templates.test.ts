import { and, eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, passwordResetTokens, profiles } from "@studyflow/db";
import { hashAccountToken } from "@studyflow/domain/participant-accounts";
import { enterStudy, submitResponse } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { saveEmailTemplate, setMessageTemplate } from "@studyflow/domain/messages";
import { participantIdsForProfile } from "@studyflow/domain/participants";
import { createStudy, createUserWithProfiles, setStudyRules } from "@studyflow/domain/study-setup";
import type { Expression } from "@studyflow/engine";
import {
  STRONG_PASSWORD,
  call,
  createTestDatabase,
  exp,
  num,
  onEvent,
  str,
  type TestDatabase,
} from "@studyflow/testkit";
import { runOutboxOnce } from "../src/outbox/outbox-delivery";
import { MAIL_FROM, startSmtpCapture, type SmtpCapture } from "./smtp-capture";

/**
 * A CASE deployment's study e-mail templates (saved through case-admin's study templates) are
 * what its rules' ADD_MESSAGE and SEND_MESSAGE_NOW send: rendered as Go templates with
 * case-backend's values, and with the template's own From, Sender and Reply-To.
 */

const silent = pino({ level: "silent" });
const T0 = Date.UTC(2031, 4, 4, 8, 0, 0);
const DUE = T0 / 1000 + 3_600;
const AFTER_DUE = (DUE + 60) * 1000;
const STUDY = "tekenradar";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

const onSurvey = (key: string, ...actions: Expression[]) =>
  onEvent("SUBMIT", call("IFTHEN", exp(call("checkSurveyResponseKey", str(key))), ...actions.map(exp)));

const RULES = [
  onEvent(
    "ENTER",
    call("UPDATE_FLAG", str("group"), str("<b>A</b>")),
    call("SET_LINKING_CODE", str("invite"), str("TR-42")),
    call("ADD_MESSAGE", str("reminder"), num(DUE)),
  ),
  onSurvey("intake", call("SEND_MESSAGE_NOW", str("welcome"))),
  onSurvey("plain", call("SEND_MESSAGE_NOW", str("plain-only"))),
  onSurvey("forged", call("SEND_MESSAGE_NOW", str("forged"))),
];

/** The value of a header of a raw message, unfolded; undefined when absent. */
function header(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.search(/\r?\n\r?\n/)).replace(/\r?\n[ \t]+/g, " ");
  return new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1]?.trim();
}

describe("participant messages through the study's CASE e-mail templates", () => {
  let database: TestDatabase;
  let smtp: SmtpCapture;
  let secret: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    smtp = await startSmtpCapture();
    ({ secret } = await createStudy(database.db, { key: STUDY }));
    await setStudyRules(database.db, STUDY, RULES, "test");
    const ctx = { clock: systemClock };
    await saveEmailTemplate(
      database.db,
      STUDY,
      {
        messageType: "reminder",
        defaultLanguage: "nl",
        headerOverrides: {
          from: "Tekenradar <info@tekenradar.test>",
          sender: "Studie-team <team@tekenradar.test>",
          replyTo: ["vragen@tekenradar.test", "support@tekenradar.test"],
          noReplyTo: false,
        },
        translations: [
          {
            lang: "nl",
            subject: "Tekenradar: je herinnering",
            templateDef: b64(
              '<p>Hoi {{.profileAlias}} ({{.language}}), groep {{index . "flags.group"}}, code {{index . "linkingCodes.invite"}}.</p>' +
                '<a href="https://tekenradar.test/login?token={{.loginToken}}&study={{.studyKey}}">Naar de vragenlijst</a>',
            ),
          },
          {
            lang: "en",
            subject: "Tekenradar: your reminder",
            templateDef: b64('<p>Hi {{.profileAlias}}, group {{index . "flags.group"}}.</p>'),
          },
        ],
      },
      "admin",
      ctx,
    );
    await saveEmailTemplate(
      database.db,
      STUDY,
      {
        messageType: "welcome",
        defaultLanguage: "en",
        headerOverrides: { from: "", sender: "", replyTo: ["ignored@tekenradar.test"], noReplyTo: true },
        translations: [{ lang: "en", subject: "", templateDef: b64("<p>Welcome, {{.profileId}}.</p>") }],
      },
      "admin",
      ctx,
    );
    // headers saved with line breaks (not through case-admin's route, which takes any text either)
    await saveEmailTemplate(
      database.db,
      STUDY,
      {
        messageType: "forged",
        headerOverrides: {
          from: "Team <team@tekenradar.test>\r\nBcc: spy@evil.test",
          replyTo: ["a@tekenradar.test\nX-Injected: yes"],
        },
        translations: [{ lang: "en", subject: "Forged", templateDef: b64("<p>Hello.</p>") }],
      },
      "admin",
      ctx,
    );
    // a studyflow message template of the same type: the CASE template is the one sent
    await setMessageTemplate(
      database.db,
      { studyKey: STUDY, messageType: "welcome", language: "en", subject: "studyflow welcome", body: "Hello." },
      "test",
      ctx,
    );
    // a type with only a studyflow template: sent as before, with the deployment's headers
    await setMessageTemplate(
      database.db,
      { studyKey: STUDY, messageType: "plain-only", language: "en", subject: "Plain {{studyKey}}", body: "Plain." },
      "test",
      ctx,
    );
  });
  afterAll(async () => {
    await smtp.close();
    await database.drop();
  });

  const round = (nowMs: number) =>
    runOutboxOnce({
      db: database.db,
      mailer: smtp.mailer,
      logger: silent,
      clock: () => nowMs,
      batchSize: 50,
      participantMessagesPerRound: 50,
    });

  async function participant(name: string, language: string) {
    const email = `${name}@example.nl`;
    const { user, profiles: created } = await createUserWithProfiles(database.db, {
      now: new Date(),
      email,
      password: STRONG_PASSWORD,
      preferredLanguage: language,
    });
    const profile = created[0]!;
    await database.db
      .update(profiles)
      .set({ alias: `${name}-alias` })
      .where(eq(profiles.id, profile.id));
    await enterStudy(database.db, { studyKey: STUDY, userId: user.id, profile }, { clock: () => T0 });
    return { email, userId: user.id, profileId: profile.id, ...participantIdsForProfile(secret, profile.id) };
  }

  /** A new participant submits `survey` (a SEND_MESSAGE_NOW rule); the outbox delivers its one mail. */
  async function submitAndDeliver(name: string, survey: string) {
    const who = await participant(name, "en");
    await submitResponse(
      database.db,
      { studyKey: STUDY, participantId: who.participantId, response: { key: survey }, submittedBy: "test" },
      { clock: () => T0 },
    );
    expect(await round(T0 + 1_000)).toMatchObject({ sent: 1, failed: 0 });
    const [mail] = smtp.mailsTo(who.email);
    return { who, mail };
  }

  it("a due ADD_MESSAGE: the Go template with case-backend's values, a login token that works, the template's headers", async () => {
    const anouk = await participant("anouk", "nl");
    const ben = await participant("ben", "en");
    expect(await round(AFTER_DUE)).toMatchObject({
      participantMessages: 2,
      participantMessagesWithoutTemplate: 0,
      sent: 2,
    });

    const [toAnouk] = smtp.mailsTo(anouk.email);
    expect(toAnouk?.subject).toBe("Tekenradar: je herinnering");
    // values as case-backend gives them, HTML-escaped by the template engine where they land in text
    expect(toAnouk?.html).toContain("<p>Hoi anouk-alias (nl), groep &lt;b&gt;A&lt;/b&gt;, code TR-42.</p>");
    const token = /login\?token=([A-Za-z0-9_-]+)&study=tekenradar/.exec(toAnouk?.html ?? "")?.[1];
    expect(token, toAnouk?.html).toBeDefined();
    const [issued] = await database.db
      .select()
      .from(passwordResetTokens)
      .where(eq(passwordResetTokens.tokenHash, hashAccountToken(token!)));
    expect(issued).toMatchObject({ userId: anouk.userId, purpose: "survey-login", info: { studyKey: STUDY } });
    expect(issued!.expiresAt.getTime()).toBe(AFTER_DUE + 7 * 86_400_000);
    // HTML only, as case-backend sends it
    expect(toAnouk?.text).toBe("");

    // the template's sender headers; bounces still go to the deployment's address
    const raw = toAnouk!.raw;
    expect(header(raw, "From")).toBe("Tekenradar <info@tekenradar.test>");
    expect(header(raw, "Sender")).toBe('"Studie-team" <team@tekenradar.test>');
    expect(header(raw, "Reply-To")).toBe("vragen@tekenradar.test, support@tekenradar.test");
    expect(toAnouk!.envelopeFrom).toBe("no-reply@studyflow.test");

    // English reads the English translation; a template that reads no loginToken issues none
    const [toBen] = smtp.mailsTo(ben.email);
    expect(toBen?.subject).toBe("Tekenradar: your reminder");
    expect(toBen?.html.trim()).toBe("<p>Hi ben-alias, group &lt;b&gt;A&lt;/b&gt;.</p>");
    const bensTokens = await database.db
      .select()
      .from(passwordResetTokens)
      .where(and(eq(passwordResetTokens.userId, ben.userId), eq(passwordResetTokens.purpose, "survey-login")));
    expect(bensTokens).toHaveLength(0);
  });

  it("SEND_MESSAGE_NOW: the CASE template wins over a studyflow template of its type; noReplyTo leaves Reply-To out", async () => {
    const { who: carla, mail: toCarla } = await submitAndDeliver("carla", "intake");
    expect(toCarla?.html.trim()).toBe(`<p>Welcome, ${carla.profileId}.</p>`);
    // an empty subject says what the mail is
    expect(toCarla?.subject).toBe("welcome");
    expect(header(toCarla!.raw, "From")).toBe(MAIL_FROM);
    expect(header(toCarla!.raw, "Reply-To")).toBeUndefined();
    expect(header(toCarla!.raw, "Sender")).toBeUndefined();
  });

  it("a type with only a studyflow template is sent through it, from the deployment's address", async () => {
    const { mail: toDaan } = await submitAndDeliver("daan", "plain");
    expect(toDaan?.subject).toBe(`Plain ${STUDY}`);
    expect(header(toDaan!.raw, "From")).toBe(MAIL_FROM);
    const rows = await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.status, "failed"));
    expect(rows).toHaveLength(0);
  });

  it("a header saved with line breaks adds nothing to the mail or its recipients; one that names no single mailbox gives way to the deployment's", async () => {
    const { who: eva, mail: toEva } = await submitAndDeliver("eva", "forged");
    expect(toEva?.envelopeTo).toEqual([eva.email]);
    expect(smtp.received.filter((mail) => mail.envelopeTo.includes("spy@evil.test"))).toHaveLength(0);
    expect(header(toEva!.raw, "Bcc")).toBeUndefined();
    expect(header(toEva!.raw, "X-Injected")).toBeUndefined();
    // read as an address group, not one mailbox: the deployment's From; no Reply-To entry parses either
    expect(header(toEva!.raw, "From")).toBe(MAIL_FROM);
    expect(header(toEva!.raw, "Reply-To")).toBeUndefined();
  });
});
