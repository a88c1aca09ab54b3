import { and, asc, eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDb,
  outgoingMessages,
  participantMessageSchedule,
  participants,
  studies,
  type DbHandle,
} from "@studyflow/db";
import { enterStudy, submitResponse, type DomainContext } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { setMessageTemplate } from "@studyflow/domain/messages";
import { participantIdsForProfile } from "@studyflow/domain/participants";
import { noTemplateError } from "@studyflow/domain/rules";
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
import { runOutboxOnce, type OutboxDeps } from "../src/outbox/outbox-delivery";
import { startSmtpCapture, type SmtpCapture } from "./smtp-capture";

const silent = pino({ level: "silent" });
const T0 = Date.UTC(2031, 2, 2, 8, 0, 0);
/** The weekly reminder every participant gets on entering is due an hour later. */
const DUE = T0 / 1000 + 3_600;
const AFTER_DUE = (DUE + 60) * 1000;
/** The study-end message is due in a month: never in these tests. */
const LATER = T0 / 1000 + 30 * 86_400;
const lf = (text: string) => text.replace(/\r\n/g, "\n");

const onSurvey = (key: string, ...actions: Expression[]) =>
  onEvent("SUBMIT", call("IFTHEN", exp(call("checkSurveyResponseKey", str(key))), ...actions.map(exp)));

const RULES = [
  onEvent(
    "ENTER",
    call("UPDATE_FLAG", str("group"), str("A&B")),
    call("ADD_MESSAGE", str("weekly-reminder"), num(DUE)),
    call("ADD_MESSAGE", str("study-end"), num(LATER)),
  ),
  onSurvey("weekly", call("UPDATE_FLAG", str("lastSurvey"), str("weekly"))),
  // holds the participant's row lock until the test's external service answers
  onSurvey("slow", call("UPDATE_FLAG", str("checked"), exp(call("externalEventEval", str("gate"))))),
  onSurvey("orphan", call("ADD_MESSAGE", str("no-template"), num(DUE))),
  onSurvey("thanks", call("SEND_MESSAGE_NOW", str("thank-you"))),
];

describe("scheduled participant messages: due → template → outbox → SMTP", () => {
  let database: TestDatabase;
  let smtp: SmtpCapture;
  let secret: string;
  const pools: DbHandle[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    smtp = await startSmtpCapture();
    ({ secret } = await createStudy(database.db, { key: "sleep" }));
    await database.db
      .update(studies)
      .set({ props: { name: { en: "Sleep study", de: "Schlafstudie" } } })
      .where(eq(studies.key, "sleep"));
    await setStudyRules(database.db, "sleep", RULES, "test");
    const templates = [
      [
        "weekly-reminder",
        "en",
        "{{studyName}}: your weekly survey",
        "Hello,\n\ngroup {{flags.group}} <3: this week's survey is open.\nSee you, {{studyName}}",
      ],
      [
        "weekly-reminder",
        "de",
        "{{studyName}}: Ihre Wochenumfrage",
        "Guten Tag,\n\nGruppe {{flags.group}}: die Umfrage dieser Woche ist offen.\nGrüße, {{studyName}}",
      ],
      ["thank-you", "en", "Thank you from {{ studyName }}", "Thanks for {{messageType}} ({{studyKey}})."],
    ] as const;
    for (const [messageType, language, subject, body] of templates) {
      await setMessageTemplate(database.db, { studyKey: "sleep", messageType, language, subject, body }, "test", {
        clock: systemClock,
      });
    }
  });
  afterAll(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close(1)));
    await smtp.close();
    await database.drop();
  });

  const round = (nowMs: number, overrides: Partial<OutboxDeps> = {}) =>
    runOutboxOnce({
      db: database.db,
      mailer: smtp.mailer,
      logger: silent,
      clock: () => nowMs,
      batchSize: 50,
      participantMessagesPerRound: 50,
      ...overrides,
    });

  /** The mails `address` received, with LF line ends (SMTP carries CRLF). */
  const mailsTo = (address: string) =>
    smtp.mailsTo(address).map((mail) => ({ ...mail, text: lf(mail.text), html: lf(mail.html) }));

  /** A participant with an account in `language`, entered at T0: weekly reminder and study end scheduled. */
  async function participant(name: string, language = "en", ctx: DomainContext = { clock: () => T0 }) {
    const email = `${name}@example.org`;
    const { user, profiles } = await createUserWithProfiles(database.db, {
      now: new Date(),
      email,
      password: STRONG_PASSWORD,
      preferredLanguage: language,
    });
    const profile = profiles[0]!;
    await enterStudy(database.db, { studyKey: "sleep", userId: user.id, profile }, ctx);
    return { email, participantId: participantIdsForProfile(secret, profile.id).participantId };
  }

  async function stateOf(participantId: string) {
    const [row] = await database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, "sleep"), eq(participants.participantId, participantId)));
    const index = await database.db
      .select({ type: participantMessageSchedule.messageType, dueAt: participantMessageSchedule.dueAt })
      .from(participantMessageSchedule)
      .where(eq(participantMessageSchedule.participantId, participantId))
      .orderBy(asc(participantMessageSchedule.messageType));
    return {
      row: row!,
      types: row!.messages.map((m) => m.type).sort(),
      index: index.map((entry) => `${entry.type}@${entry.dueAt}`),
    };
  }

  const submit = (participantId: string, key: string, ctx: DomainContext) =>
    submitResponse(database.db, { studyKey: "sleep", participantId, response: { key }, submittedBy: "test" }, ctx);

  it("sends due messages in each participant's language, removes them from the participant and the index, keeps the rest", async () => {
    const anna = await participant("anna", "en");
    const bernd = await participant("bernd", "de-CH");
    const chloe = await participant("chloe", "fr");
    const entered = await stateOf(anna.participantId);
    expect(entered.types).toEqual(["study-end", "weekly-reminder"]);
    expect(entered.index).toEqual([`study-end@${LATER}`, `weekly-reminder@${DUE}`]);

    // not yet due: nothing is queued or sent, nothing leaves the participants
    expect(await round(T0 + 30 * 60_000)).toMatchObject({ participantMessages: 0, claimed: 0 });
    expect((await stateOf(anna.participantId)).types).toEqual(["study-end", "weekly-reminder"]);

    const due = await round(AFTER_DUE);
    expect(due).toMatchObject({ participantMessages: 3, participantMessagesWithoutTemplate: 0, sent: 3, failed: 0 });

    const [toAnna] = mailsTo(anna.email);
    expect(toAnna?.subject).toBe("Sleep study: your weekly survey");
    expect(toAnna?.text).toBe("Hello,\n\ngroup A&B <3: this week's survey is open.\nSee you, Sleep study\n");
    expect(toAnna?.html).toContain('<html lang="en">');
    expect(toAnna?.html).toContain(
      "<p>group A&amp;B &lt;3: this week&#39;s survey is open.<br>\nSee you, Sleep study</p>",
    );
    // de-CH reads the German template, and the study's German name
    const [toBernd] = mailsTo(bernd.email);
    expect(toBernd?.subject).toBe("Schlafstudie: Ihre Wochenumfrage");
    expect(toBernd?.text).toContain("Gruppe A&B: die Umfrage dieser Woche ist offen.\nGrüße, Schlafstudie");
    // no French template: English
    expect(mailsTo(chloe.email).map((mail) => mail.subject)).toEqual(["Sleep study: your weekly survey"]);

    for (const { participantId } of [anna, bernd, chloe]) {
      const after = await stateOf(participantId);
      expect(after.types).toEqual(["study-end"]);
      expect(after.index).toEqual([`study-end@${LATER}`]);
    }
    const sentState = await stateOf(anna.participantId);
    expect(sentState.row.version).toBe(entered.row.version + 1);
    expect(sentState.row.modifiedAt).toBe(DUE + 60);

    // sent once: the next round finds nothing
    expect(await round(AFTER_DUE + 60_000)).toMatchObject({ participantMessages: 0, claimed: 0 });
    expect(mailsTo(anna.email)).toHaveLength(1);
  });

  it("a message type without any template is recorded as a failed outbox row and dropped; the rest goes on", async () => {
    const dora = await participant("dora", "en");
    await submit(dora.participantId, "orphan", { clock: () => T0 });
    expect((await stateOf(dora.participantId)).types).toEqual(["no-template", "study-end", "weekly-reminder"]);

    expect(await round(AFTER_DUE)).toMatchObject({
      participantMessages: 1,
      participantMessagesWithoutTemplate: 1,
      sent: 1,
    });

    const rows = await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.template, "no-template"));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: "failed",
      studyKey: "sleep",
      lastError: noTemplateError("sleep", "no-template"),
    });
    expect(mailsTo(dora.email).map((mail) => mail.subject)).toEqual(["Sleep study: your weekly survey"]);
    const after = await stateOf(dora.participantId);
    expect(after.types).toEqual(["study-end"]);
    expect(after.index).toEqual([`study-end@${LATER}`]);
    // not retried: nothing is left to find
    expect(await round(AFTER_DUE + 60_000)).toMatchObject({ participantMessagesWithoutTemplate: 0, claimed: 0 });
  });

  it("SEND_MESSAGE_NOW goes through the same templates", async () => {
    const erik = await participant("erik", "de");
    await submit(erik.participantId, "thanks", { clock: () => T0 });
    expect(await round(T0 + 1_000)).toMatchObject({ sent: 1 });
    // only an English template: English, with the study's English name
    expect(mailsTo(erik.email).map(({ subject, text }) => ({ subject, text }))).toEqual([
      { subject: "Thank you from Sleep study", text: "Thanks for thank-you (sleep).\n" },
    ]);
  });

  it("a submit holding the participant makes the sender skip it; after the submit, the message goes; nothing is lost", async () => {
    const fritz = await participant("fritz", "en");
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const submitting = submit(fritz.participantId, "slow", {
      clock: () => AFTER_DUE,
      callExternalService: async () => {
        entered();
        await gate;
        return { value: "yes" };
      },
    });
    try {
      await inside; // the submit holds fritz's row lock now
      await round(AFTER_DUE);
      expect(mailsTo(fritz.email)).toHaveLength(0);
      expect((await stateOf(fritz.participantId)).types).toEqual(["study-end", "weekly-reminder"]);
    } finally {
      release();
      await submitting;
    }
    expect(await round(AFTER_DUE + 1_000)).toMatchObject({ participantMessages: 1, sent: 1 });
    const after = await stateOf(fritz.participantId);
    expect(after.row.flags).toEqual({ group: "A&B", checked: "yes" });
    expect(Object.keys(after.row.lastSubmissions)).toEqual(["slow"]);
    expect(after.types).toEqual(["study-end"]);
    expect(after.index).toEqual([`study-end@${LATER}`]);
    expect(mailsTo(fritz.email)).toHaveLength(1);
  });

  it("a submit arriving while the sender holds the participant waits for it; both changes stay", async () => {
    const gina = await participant("gina", "en");
    const versionBefore = (await stateOf(gina.participantId)).row.version;
    const blocker = createDb(database.url, { max: 1 });
    const observer = createDb(database.url, { max: 1 });
    pools.push(blocker, observer);
    /** Waits until a backend of the test database waits on a lock in a statement containing `text`. */
    const waitingOn = async (text: string) => {
      for (let i = 0; i < 200; i++) {
        const rows = await observer.sql<{ query: string }[]>`
          select query from pg_stat_activity
          where datname = ${database.name} and wait_event_type = 'Lock' and query like ${`%${text}%`}`;
        if (rows.length > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`nobody waits on a lock in a statement with ${text}`);
    };

    // The sender stops at its outbox insert (the table is share-locked), holding gina's row.
    let unblock!: () => void;
    const unblocked = new Promise<void>((resolve) => (unblock = resolve));
    let locked!: () => void;
    const tableLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = blocker.sql.begin(async (tx) => {
      await tx`lock table outgoing_messages in share mode`;
      locked();
      await unblocked;
    });
    await tableLocked;
    const sending = round(AFTER_DUE);
    await waitingOn('insert into "outgoing_messages"');
    const submitting = submit(gina.participantId, "weekly", { clock: () => AFTER_DUE + 1_000 });
    // the event's lock of participant and study (lockParticipantForEvent)
    await waitingOn("for update of p for share of s");

    unblock();
    await holding;
    const [sent, submitted] = await Promise.all([sending, submitting]);
    expect(sent).toMatchObject({ participantMessages: 1, sent: 1 });
    expect(submitted.participant.flags).toEqual({ group: "A&B", lastSurvey: "weekly" });

    const after = await stateOf(gina.participantId);
    expect(after.row.flags).toEqual({ group: "A&B", lastSurvey: "weekly" });
    expect(after.types).toEqual(["study-end"]);
    expect(after.index).toEqual([`study-end@${LATER}`]);
    expect(after.row.version).toBe(versionBefore + 2);
    expect(mailsTo(gina.email)).toHaveLength(1);
  });

  it("submits racing sender rounds on two connections lose nothing and send each message once", async () => {
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => participant(`racer-${i}`, i % 2 ? "de" : "en")),
    );
    const senders = [createDb(database.url, { max: 2 }), createDb(database.url, { max: 2 })];
    pools.push(...senders);

    await Promise.all([
      ...racers.map((racer, i) => submit(racer.participantId, "weekly", { clock: () => AFTER_DUE + i })),
      ...[0, 1, 0, 1].map((pool) =>
        round(AFTER_DUE, { db: senders[pool]!.db, participantMessagesPerRound: 3, batchSize: 3 }),
      ),
    ]);
    // whatever the rounds left for later
    while ((await round(AFTER_DUE + 2_000)).participantMessages > 0);
    await round(AFTER_DUE + 3_000);

    for (const racer of racers) {
      const after = await stateOf(racer.participantId);
      expect(after.row.flags, racer.email).toEqual({ group: "A&B", lastSurvey: "weekly" });
      expect(after.types, racer.email).toEqual(["study-end"]);
      expect(after.index, racer.email).toEqual([`study-end@${LATER}`]);
      expect(mailsTo(racer.email), racer.email).toHaveLength(1);
    }
  });
});
