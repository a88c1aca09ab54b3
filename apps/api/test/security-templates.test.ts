import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditLog, emailTemplates, outgoingMessages, scheduledEmails, smsTemplates, users } from "@studyflow/db";
import { SCHEDULED_EMAIL_TEMPLATE, fireDueScheduledEmails } from "@studyflow/domain/messages";
import { MAX_TEMPLATE_STEPS } from "@studyflow/go-template";
import { managementToken, participantUser, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/**
 * Templates t1…tN each calling the one before twice, then tN: 2^N copies of t0. At 22 levels the
 * check on save used to block the process for seconds and grow it by hundreds of MB; at 30 it ran
 * for minutes and then out of memory.
 */
function doublingChain(levels: number): string {
  const defined = ['{{define "t0"}}x{{end}}'];
  for (let level = 1; level <= levels; level++) {
    defined.push(`{{define "t${level}"}}{{template "t${level - 1}"}}{{template "t${level - 1}"}}{{end}}`);
  }
  return `${defined.join("")}{{template "t${levels}"}}`;
}

const translations = (body: string) => [
  { lang: "en", subject: "Hello", templateDef: b64("<p>Hello</p>") },
  { lang: "de", subject: "Hallo", templateDef: b64(body) },
];

/** The four ways a Go template is stored, each with the field its translations sit in. */
const saves = [
  {
    name: "global e-mail template",
    path: "/v1/messaging/email-templates/global-templates",
    field: "translations",
    body: (template: string) => ({
      messageType: "weekly",
      defaultLanguage: "en",
      translations: translations(template),
    }),
  },
  {
    name: "study e-mail template",
    path: "/v1/messaging/email-templates/study-templates/flu",
    field: "translations",
    body: (template: string) => ({
      messageType: "invite",
      defaultLanguage: "en",
      translations: translations(template),
    }),
  },
  {
    name: "SMS template",
    path: "/v1/messaging/sms-templates",
    field: "translations",
    body: (template: string) => ({
      messageType: "otp",
      defaultLanguage: "en",
      translations: translations(template).map(({ lang, templateDef }) => ({ lang, templateDef })),
    }),
  },
  {
    name: "scheduled e-mail",
    path: "/v1/messaging/scheduled-emails",
    field: "template.translations",
    body: (template: string) => ({
      template: { messageType: "reminder", defaultLanguage: "en", translations: translations(template) },
      type: "all-users",
      nextTime: Math.floor(Date.now() / 1000) + 3600,
      period: 86400,
      label: "reminder",
    }),
  },
] as const;

describe("message templates: bounded work on save and on send", () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    const db = t.database.db;
    await db.delete(auditLog);
    await db.delete(emailTemplates);
    await db.delete(smsTemplates);
    await db.delete(scheduledEmails);
    await db.delete(outgoingMessages);
  });

  const post = async (path: string, body: unknown) => {
    const started = performance.now();
    const response = await t.app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      ms: performance.now() - started,
    };
  };

  const stored = async () => {
    const db = t.database.db;
    return {
      emailTemplates: await db.select().from(emailTemplates),
      smsTemplates: await db.select().from(smsTemplates),
      scheduledEmails: await db.select().from(scheduledEmails),
      audit: await db.select().from(auditLog),
    };
  };

  for (const save of saves) {
    it(`${save.name}: a chain of template calls 22 and 30 levels deep is refused at once, 400 naming it; nothing stored`, async () => {
      for (const levels of [22, 30]) {
        const answer = await post(save.path, save.body(doublingChain(levels)));
        expect(answer).toEqual({
          status: 400,
          body: {
            error:
              `${save.field}[1].templateDef: error while checking template validity (lang "de"): expands to more ` +
              `than ${MAX_TEMPLATE_STEPS} steps when rendered, the most a template may take ({{template "t${levels}"}} ` +
              "runs the templates it calls, and they theirs, each time)",
          },
          ms: expect.any(Number),
        });
        // counted, not rendered: well within a request's time
        expect(answer.ms).toBeLessThan(3_000);
      }
      expect(await stored()).toEqual({ emailTemplates: [], smsTemplates: [], scheduledEmails: [], audit: [] });

      // a template of ordinary size is stored as before
      const fine = await post(save.path, save.body(doublingChain(4)));
      expect(fine.status).toBe(200);
    });
  }

  it("refuses text and ranges past the limits on save, naming the limit", async () => {
    const [global] = saves;
    const output = await post(global.path, global.body('{{$x := "abcdefgh"}}{{range 40}}{{$x = print $x $x}}{{end}}'));
    expect(output).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^translations\[1\]\.templateDef: .*stopped at 1048576 bytes of text/) },
    });
    const range = await post(global.path, global.body("{{range 100000000}}x{{end}}"));
    expect(range).toMatchObject({ status: 400, body: { error: expect.stringMatching(/more than 100000 steps/) } });
    expect((await stored()).emailTemplates).toEqual([]);
  });

  it("a scheduled e-mail whose recipients' data takes it past the limit fails that mail with the reason; others go out", async () => {
    const db = t.database.db;
    const now = Date.now();
    const made = await participantUser(t, ["main"], "reader@example.org");
    await db
      .update(users)
      .set({ accountConfirmedAt: new Date(now - 86400_000), weeklyMessageDayOfWeek: new Date(now).getUTCDay() })
      .where(eq(users.id, made.user.id));
    // four ranges as long as the message type: nothing without data (the check on save), 24^4 with it
    const count = "len (print $.messageType)";
    const heavy = `{{range ${count}}}{{range ${count}}}{{range ${count}}}{{range ${count}}}.{{end}}{{end}}{{end}}{{end}}`;
    const schedule = (messageType: string, template: string) => ({
      template: {
        messageType,
        defaultLanguage: "en",
        translations: [{ lang: "en", subject: "S", templateDef: b64(template) }],
      },
      type: "all-users",
      nextTime: Math.floor(now / 1000) - 60,
      period: 86400,
      label: messageType,
    });
    const bad = await post("/v1/messaging/scheduled-emails", schedule("reminder-of-24-characters", heavy));
    expect(bad.status).toBe(200);
    const good = await post("/v1/messaging/scheduled-emails", schedule("plain", "<p>{{.messageType}}</p>"));
    expect(good.status).toBe(200);

    const started = performance.now();
    const round = await fireDueScheduledEmails(db, new Date(now));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(round).toEqual({ fired: 2, queued: 2, ended: 0 });
    const rows = await db.select().from(outgoingMessages).orderBy(outgoingMessages.status);
    expect(rows.map(({ template, status, lastError, payload }) => ({ template, status, lastError, payload }))).toEqual([
      {
        template: SCHEDULED_EMAIL_TEMPLATE,
        status: "failed",
        lastError:
          `scheduled e-mail not sent: template (lang "en") could not be rendered: stopped after ${MAX_TEMPLATE_STEPS} ` +
          "steps, the most a template may take: it does too much work (templates that call other templates several " +
          "times, or a range over many items)",
        payload: { scheduleId: (bad.body.schedule as { id: string }).id, messageType: "reminder-of-24-characters" },
      },
      {
        template: SCHEDULED_EMAIL_TEMPLATE,
        status: "pending",
        lastError: null,
        payload: {
          scheduleId: (good.body.schedule as { id: string }).id,
          messageType: "plain",
          subject: "S",
          html: "<p>plain</p>",
        },
      },
    ]);
    // both schedules moved on to their next slot: the failing one does not block the round
    expect((await db.select().from(scheduledEmails)).every((row) => row.nextTime > now / 1000)).toBe(true);
  });
});
