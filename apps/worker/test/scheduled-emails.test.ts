import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialIdMap, outgoingMessages, passwordResetTokens, scheduledEmails, users } from "@studyflow/db";
import { saveScheduledEmail, type CaseScheduledEmailInput } from "@studyflow/domain/messages";
import { peekAccountToken, unsubscribeNewsletter } from "@studyflow/domain/participant-accounts";
import { createStudy, createUserWithProfiles } from "@studyflow/domain/study-setup";
import { MAINTENANCE_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createTestDatabase, testRedisUrl, uniqueQueuePrefix, type TestDatabase } from "@studyflow/testkit";
import { runOutboxOnce } from "../src/outbox/outbox-delivery";
import { upsertSchedules } from "../src/schedules/upsert-schedules";
import {
  FIRE_SCHEDULED_EMAILS_EVERY_MS,
  runScheduledEmailsRound,
  scheduledEmailsSchedule,
} from "../src/schedules/scheduled-emails";
import { MAIL_FROM, startSmtpCapture, type SmtpCapture } from "./smtp-capture";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("scheduled e-mails: the cluster-wide round", () => {
  let database: TestDatabase;
  const producer = createRedisConnection(testRedisUrl, "producer");
  const prefix = uniqueQueuePrefix();
  let queue: Queue;

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix });
  });
  afterAll(async () => {
    await queue.close();
    await producer.quit();
    await database.close();
  });

  it("is one job scheduler however many replicas upsert it", async () => {
    await upsertSchedules(queue, [scheduledEmailsSchedule()]);
    await upsertSchedules(queue, [scheduledEmailsSchedule()]);
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.every])).toEqual([
      ["fire-scheduled-emails", FIRE_SCHEDULED_EMAILS_EVERY_MS],
    ]);
  });

  it("fires due schedules into the outbox and moves them on; a second round fires nothing", async () => {
    const db = database.db;
    const now = Date.now();
    const nowSeconds = Math.floor(now / 1000);
    const made = await createUserWithProfiles(db, {
      now: new Date(),
      email: "reader@example.org",
      password: "Correct-Horse-Battery-9",
      profiles: ["main"],
    });
    await db
      .update(users)
      .set({ accountConfirmedAt: new Date(now - 1000), weeklyMessageDayOfWeek: new Date(now).getUTCDay() })
      .where(eq(users.id, made.user.id));
    const schedule = await saveScheduledEmail(
      db,
      {
        type: "all-users",
        template: {
          messageType: "reminder",
          defaultLanguage: "en",
          translations: [{ lang: "en", subject: "Hi", templateDef: b64("<p>{{.messageType}}</p>") }],
        },
        nextTime: nowSeconds - 5,
        period: 3600,
      },
      "tester",
      { clock: () => nowSeconds * 1000 },
    );
    const logged: unknown[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const deps = { db, logger, clock: () => now };
    expect(await runScheduledEmailsRound(deps)).toEqual({ fired: 1, queued: 1, ended: 0 });
    expect(await runScheduledEmailsRound(deps)).toEqual({ fired: 0, queued: 0, ended: 0 });
    const mails = await db.select().from(outgoingMessages);
    expect(mails.map((mail) => [mail.userId, mail.payload])).toEqual([
      [made.user.id, { scheduleId: schedule.id, messageType: "reminder", subject: "Hi", html: "<p>reminder</p>" }],
    ]);
    const [row] = await db.select().from(scheduledEmails);
    expect(row?.nextTime).toBe(nowSeconds - 5 + 3600);
    expect(logged).toEqual([expect.objectContaining({ msg: "scheduled e-mails fired", fired: 1, queued: 1 })]);
  });
});

const DAY = 86_400;
const WEEK = 7 * DAY;

/** A case-admin template body: base64 of a Go template, one translation per language given. */
function template(messageType: string, translations: Record<string, [subject: string, html: string]>) {
  return {
    messageType,
    defaultLanguage: "en",
    translations: Object.entries(translations).map(([lang, [subject, html]]) => ({
      lang,
      subject,
      templateDef: b64(html),
    })),
  };
}

/** An account that takes scheduled mails at `now`: confirmed, today its weekly day; `changes` on top. */
async function account(
  db: TestDatabase["db"],
  email: string,
  now: number,
  changes: Partial<typeof users.$inferInsert> = {},
) {
  const made = await createUserWithProfiles(db, {
    now: new Date(),
    email,
    password: "Correct-Horse-Battery-9",
    profiles: ["main"],
    preferredLanguage: changes.preferredLanguage ?? "en",
  });
  await db
    .update(users)
    .set({ accountConfirmedAt: new Date(now - 1000), weeklyMessageDayOfWeek: new Date(now).getUTCDay(), ...changes })
    .where(eq(users.id, made.user.id));
  return { id: made.user.id, email: made.user.email, profileId: made.profiles[0]!.id };
}

describe("scheduled e-mails sent by real workers through a real SMTP server", () => {
  let harness: WorkerHarness;
  let smtp: SmtpCapture;
  let maintenance: Queue;
  const producer = createRedisConnection(testRedisUrl, "producer");

  beforeAll(async () => {
    harness = await createWorkerHarness();
    smtp = await startSmtpCapture();
    maintenance = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix: harness.prefix });
  });
  afterAll(async () => {
    await harness.close();
    await maintenance.close();
    producer.disconnect();
    await smtp.close();
  });

  it("a due schedule is sent once to each right recipient, however many workers run; its next slot moves on", async () => {
    const db = harness.database.db;
    const now = Date.now();
    const nowSeconds = Math.floor(now / 1000);
    await createStudy(db, { key: "flu" });
    const alice = await account(db, "alice@example.org", now);
    const bruno = await account(db, "bruno@example.org", now, { preferredLanguage: "de" });
    await account(db, "unconfirmed@example.org", now, { accountConfirmedAt: null });
    await account(db, "other-day@example.org", now, { weeklyMessageDayOfWeek: (new Date(now).getUTCDay() + 1) % 7 });
    await account(db, "locked@example.org", now, { lockedAt: new Date(now - 1000) });
    // only bruno takes part in the study
    await db
      .insert(confidentialIdMap)
      .values({ studyKey: "flu", confidentialId: "c-bruno", profileId: bruno.profileId });

    const daily = await saveScheduledEmail(
      db,
      {
        type: "all-users",
        label: "daily reminder",
        template: template("reminder", {
          en: ["Your daily reminder", "<p>Hello ({{.language}})</p>"],
          de: ["Ihre Erinnerung", "<p>Hallo ({{.language}})</p>"],
        }),
        nextTime: nowSeconds - 5,
        period: DAY,
      },
      "tester",
      { clock: () => nowSeconds * 1000 },
    );
    const weekly = await saveScheduledEmail(
      db,
      {
        type: "study-participants",
        studyKey: "flu",
        template: template("study-news", { en: ["Study news", "<p>News of {{.studyKey}}</p>"] }),
        nextTime: nowSeconds - 5,
        period: WEEK,
      },
      "tester",
      { clock: () => nowSeconds * 1000 },
    );
    const future = await saveScheduledEmail(
      db,
      {
        type: "all-users",
        template: template("reminder", { en: ["Later", "<p>later</p>"] }),
        nextTime: nowSeconds + 3_600,
        period: DAY,
      },
      "tester",
      { clock: () => nowSeconds * 1000 },
    );

    // Two replicas with maintenance and mail: the round runs on one of them, the outbox delivers.
    const mail = { smtpUrl: smtp.url, from: MAIL_FROM, pollIntervalMs: 200 };
    const replicas = [1, 2].map(() => harness.start({ maintenance: true, mail }));
    await Promise.all(replicas.map((replica) => replica.schedulesReady));

    const deadline = Date.now() + 20_000;
    while (smtp.received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // time for a second delivery, were there one
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const received = smtp.received
      .map((mail) => ({ to: mail.envelopeTo, subject: mail.subject, html: mail.html.trim(), text: mail.text }))
      .sort((a, b) => `${a.to[0]}${a.subject}`.localeCompare(`${b.to[0]}${b.subject}`));
    expect(received).toEqual([
      { to: [alice.email], subject: "Your daily reminder", html: "<p>Hello (en)</p>", text: "" },
      { to: [bruno.email], subject: "Ihre Erinnerung", html: "<p>Hallo (de)</p>", text: "" },
      { to: [bruno.email], subject: "Study news", html: "<p>News of flu</p>", text: "" },
    ]);
    const rows = await db.select().from(outgoingMessages);
    expect(rows.map((row) => row.status)).toEqual(["sent", "sent", "sent"]);
    expect(rows.filter((row) => row.studyKey === "flu")).toHaveLength(1);

    // daily and weekly slots moved one period on; the future one untouched
    const next = new Map((await db.select().from(scheduledEmails)).map((row) => [row.id, row.nextTime]));
    expect(next.get(daily.id)).toBe(nowSeconds - 5 + DAY);
    expect(next.get(weekly.id)).toBe(nowSeconds - 5 + WEEK);
    expect(next.get(future.id)).toBe(nowSeconds + 3_600);
    // one round, taken by one replica
    const rounds = (await maintenance.getJobs(["completed"])).filter((job) => job.name === "fire-scheduled-emails");
    expect(rounds.map((job) => job.returnvalue as unknown)).toEqual([{ fired: 2, queued: 3, ended: 0 }]);
  });
});

describe("scheduled e-mail rounds", () => {
  let database: TestDatabase;
  let smtp: SmtpCapture;
  const NOW = Date.UTC(2031, 2, 5, 9, 30, 0);
  const NOW_S = Math.floor(NOW / 1000);
  const silent = pino({ level: "silent" });

  beforeAll(async () => {
    database = await createTestDatabase();
    smtp = await startSmtpCapture();
  });
  beforeEach(async () => {
    await database.db.delete(outgoingMessages);
    await database.db.delete(scheduledEmails);
    await database.db.delete(users);
    smtp.received.length = 0;
  });
  afterAll(async () => {
    await smtp.close();
    await database.drop();
  });

  const round = (at: number) => runScheduledEmailsRound({ db: database.db, logger: silent, clock: () => at });
  const deliver = (at: number) =>
    runOutboxOnce({ db: database.db, mailer: smtp.mailer, logger: silent, clock: () => at });
  const save = (input: Partial<CaseScheduledEmailInput>, at = NOW_S) =>
    saveScheduledEmail(
      database.db,
      {
        type: "all-users",
        template: template("reminder", { en: ["Hi", "<p>hi</p>"] }),
        nextTime: at,
        period: DAY,
        ...input,
      },
      "tester",
      { clock: () => at * 1000 },
    );

  it("overlapping rounds fire each due slot once", async () => {
    const db = database.db;
    const readers = await Promise.all(["r1", "r2"].map((name) => account(db, `${name}@example.org`, NOW)));
    const schedules = await Promise.all(
      [1, 2, 3, 4, 5].map((index) => save({ label: `s${index}`, nextTime: NOW_S - index })),
    );
    const rounds = await Promise.all([round(NOW), round(NOW), round(NOW)]);
    expect(rounds.reduce((sum, r) => sum + r.fired, 0)).toBe(5);
    expect(rounds.reduce((sum, r) => sum + r.queued, 0)).toBe(10);
    const rows = await db.select().from(outgoingMessages);
    const pairs = rows.map((row) => `${(row.payload as { scheduleId: string }).scheduleId}/${row.userId}`);
    expect(new Set(pairs).size).toBe(10);
    expect(new Set(rows.map((row) => row.userId))).toEqual(new Set(readers.map((reader) => reader.id)));
    expect(new Set(rows.map((row) => (row.payload as { scheduleId: string }).scheduleId))).toEqual(
      new Set(schedules.map((schedule) => schedule.id)),
    );
    expect((await round(NOW)).fired).toBe(0);
  });

  it("a weekly schedule missed for weeks fires once and moves to its first slot not past", async () => {
    await account(database.db, "weekly@example.org", NOW);
    const start = NOW_S - 3 * WEEK - 60;
    const schedule = await save({ nextTime: start, period: WEEK }, start);
    expect(await round(NOW)).toEqual({ fired: 1, queued: 1, ended: 0 });
    const [row] = await database.db.select().from(scheduledEmails);
    expect(row).toMatchObject({ id: schedule.id, nextTime: start + 4 * WEEK });
    expect(await round(NOW + 3_600_000)).toEqual({ fired: 0, queued: 0, ended: 0 });
    // a week on, the next slot fires
    expect(await round((start + 4 * WEEK) * 1000)).toMatchObject({ fired: 1 });
  });

  it("a schedule whose next slot is past `until` fires its last slot and is gone", async () => {
    await account(database.db, "last@example.org", NOW);
    await save({ nextTime: NOW_S - 10, period: DAY, until: NOW_S + DAY / 2 }, NOW_S - 20);
    expect(await round(NOW)).toEqual({ fired: 1, queued: 1, ended: 1 });
    expect(await database.db.select().from(scheduledEmails)).toEqual([]);
    expect(await round(NOW + DAY * 1000)).toEqual({ fired: 0, queued: 0, ended: 0 });
    expect(await database.db.select().from(outgoingMessages)).toHaveLength(1);
  });

  it("a newsletter carries each reader's unsubscribe token; a reader unsubscribed before delivery gets nothing", async () => {
    const db = database.db;
    const subscribed = { subscribedToNewsletter: true };
    const keen = await account(db, "keen@example.org", NOW, subscribed);
    const leaving = await account(db, "leaving@example.org", NOW, subscribed);
    await account(db, "never@example.org", NOW, { subscribedToNewsletter: false });
    await save({
      template: template("newsletter", {
        en: [
          "Our newsletter",
          '<p><a href="https://study.example/unsubscribe?token={{.unsubscribeToken}}">stop</a></p>',
        ],
      }),
      nextTime: NOW_S,
    });
    expect(await round(NOW)).toEqual({ fired: 1, queued: 2, ended: 0 });
    const tokenIn = (html: string) => /token=([A-Za-z0-9_-]{43})"/.exec(html)?.[1] ?? "";
    const rows = await db.select().from(outgoingMessages);
    const leavingRow = rows.find((row) => row.userId === leaving.id);
    // the leaving reader follows the link before the outbox gets to the mail
    await unsubscribeNewsletter(db, tokenIn((leavingRow?.payload as { html: string }).html), new Date(NOW));

    expect(await deliver(NOW + 1_000)).toMatchObject({ sent: 1, failed: 1 });
    expect(smtp.received.map((mail) => mail.envelopeTo)).toEqual([[keen.email]]);
    const [failed] = await db.select().from(outgoingMessages).where(eq(outgoingMessages.userId, leaving.id));
    expect(failed).toMatchObject({
      status: "failed",
      lastError: "scheduled e-mail not sent: the account unsubscribed from the newsletter",
    });

    // the link in the mail the keen reader got works too
    const token = tokenIn(smtp.received[0]!.html);
    expect(token).not.toBe("");
    await unsubscribeNewsletter(db, token, new Date(NOW + 2_000));
    const [after] = await db.select().from(users).where(eq(users.id, keen.id));
    expect(after?.subscribedToNewsletter).toBe(false);
    // and nobody is left to take the next issue
    expect(await round(NOW + DAY * 1000)).toMatchObject({ fired: 1, queued: 0 });
  });

  it("a template reading loginToken gets a survey-login token of the study per reader; one that does not, none", async () => {
    const db = database.db;
    await createStudy(db, { key: "sleep" });
    const reader = await account(db, "login@example.org", NOW);
    await db
      .insert(confidentialIdMap)
      .values({ studyKey: "sleep", confidentialId: "c-1", profileId: reader.profileId });
    await save({ nextTime: NOW_S });
    expect(await round(NOW)).toMatchObject({ queued: 1 });
    expect(await db.select().from(passwordResetTokens)).toEqual([]);

    await save({
      type: "study-participants",
      studyKey: "sleep",
      template: template("reminder", {
        en: ["Your survey", '<a href="https://study.example/survey?token={{.loginToken}}">open</a>'],
      }),
      nextTime: NOW_S,
    });
    expect(await round(NOW)).toMatchObject({ fired: 1, queued: 1 });
    expect(await deliver(NOW + 1_000)).toMatchObject({ sent: 2 });
    const mail = smtp.received.find((received) => received.subject === "Your survey");
    const token = /token=([A-Za-z0-9_-]{43})"/.exec(mail?.html ?? "")?.[1] ?? "";
    const holder = await peekAccountToken(db, token, ["survey-login"], new Date(NOW + 6 * DAY * 1000));
    expect(holder).toMatchObject({ userId: reader.id, info: { studyKey: "sleep" } });
    // a week on, the link has ended
    expect(await peekAccountToken(db, token, ["survey-login"], new Date(NOW + 8 * DAY * 1000))).toBeNull();
  });

  it("a template's header overrides reach its mails: From, Sender and Reply-To, or no Reply-To at all", async () => {
    const db = database.db;
    await account(db, "headers@example.org", NOW);
    await save({
      template: {
        ...template("reminder", { en: ["From the team", "<p>hi</p>"] }),
        headerOverrides: { from: "Study team <team@study.example>", sender: "", replyTo: ["help@study.example"] },
      },
    });
    await save({
      template: {
        ...template("news", { en: ["No replies", "<p>news</p>"] }),
        headerOverrides: { sender: "Operator <ops@study.example>", replyTo: ["x@study.example"], noReplyTo: true },
      },
    });
    expect(await round(NOW)).toMatchObject({ fired: 2, queued: 2 });
    expect(await deliver(NOW + 1_000)).toMatchObject({ sent: 2 });
    const head = (subject: string) => {
      const raw = smtp.received.find((received) => received.subject === subject)?.raw ?? "";
      return raw.slice(0, raw.search(/\r?\n\r?\n/));
    };
    expect(head("From the team")).toMatch(/^From: Study team <team@study\.example>$/m);
    expect(head("From the team")).toMatch(/^Reply-To: help@study\.example$/m);
    expect(head("From the team")).not.toMatch(/^Sender:/m);
    expect(head("No replies").split(/\r?\n/)).toContain(`From: ${MAIL_FROM}`);
    expect(head("No replies")).toMatch(/^Sender: Operator <ops@study\.example>$/m);
    expect(head("No replies")).not.toMatch(/^Reply-To:/m);
  });

  it("a mail queued for an account locked or being deleted since is not sent", async () => {
    const db = database.db;
    const locked = await account(db, "locked-later@example.org", NOW);
    const deleting = await account(db, "deleting-later@example.org", NOW);
    await save({ nextTime: NOW_S });
    expect(await round(NOW)).toMatchObject({ queued: 2 });
    await db
      .update(users)
      .set({ lockedAt: new Date(NOW) })
      .where(eq(users.id, locked.id));
    await db
      .update(users)
      .set({ deletionRequestedAt: new Date(NOW) })
      .where(eq(users.id, deleting.id));
    expect(await deliver(NOW + 1_000)).toMatchObject({ sent: 0, failed: 2 });
    expect(smtp.received).toEqual([]);
    const errors = (await db.select().from(outgoingMessages)).map((row) => row.lastError).sort();
    expect(errors).toEqual([
      "scheduled e-mail not sent: the account is being deleted",
      "scheduled e-mail not sent: the account was locked after the mail was queued",
    ]);
  });
});
