import { and, eq, isNull, sql } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, participants, researcherMessages } from "@studyflow/db";
import { submitResponse } from "@studyflow/domain/events";
import {
  RESEARCHER_NOTIFICATION_TEMPLATE,
  addSubscription,
  queueResearcherNotifications,
  renderResearcherNotification,
} from "@studyflow/domain/notifications";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, exp, onEvent, str, type TestDatabase } from "@studyflow/testkit";
import { runOutboxOnce } from "../src/outbox/outbox-delivery";
import { decodeQuotedPrintable } from "./mail-parsing";
import { smtpCapturePerTest, type CapturedMail } from "./smtp-capture";

const silent = pino({ level: "silent" });
const NOW = Date.UTC(2031, 4, 1, 9, 30);

/** The whole message, soft line breaks and quoted-printable escapes decoded. */
const bodyOf = (mail: CapturedMail) => decodeQuotedPrintable(mail.raw);

/** A weekly survey: a fever answer notifies the researchers, with the measured temperature. */
const rules = [
  onEvent(
    "SUBMIT",
    call(
      "IFTHEN",
      exp(call("responseHasKeysAny", str("weekly.Q1"), str("rg.mcg"), str("fever"))),
      exp(
        call(
          "NOTIFY_RESEARCHER",
          str("symptom-report"),
          str("symptom"),
          str("fever"),
          str("temperature"),
          exp(call("getResponseValueAsStr", str("weekly.Q2"), str("rg.num"))),
        ),
      ),
    ),
  ),
];

const weekly = (symptom: string, temperature: string) => ({
  key: "weekly",
  responses: [
    { key: "weekly.Q1", response: { key: "rg", items: [{ key: "mcg", items: [{ key: symptom }] }] } },
    { key: "weekly.Q2", response: { key: "rg", items: [{ key: "num", value: temperature }] } },
  ],
});

describe("researcher notifications: NOTIFY_RESEARCHER by e-mail to the study's subscribers", () => {
  let database: TestDatabase;
  const smtp = smtpCapturePerTest();

  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "flu-watch" });
    await createStudy(database.db, { key: "diet-study" });
    await setStudyRules(database.db, "flu-watch", rules, "test");
    await database.db
      .insert(participants)
      .values({ studyKey: "flu-watch", participantId: "p-7f3a", studyStatus: "active", enteredAt: 1, modifiedAt: 1 });
    const subscriptions: [string, string, string][] = [
      ["flu-watch", "symptom-report", "lena@example.org"],
      ["flu-watch", "symptom-report", "max@example.org"],
      ["flu-watch", "kit-request", "logistics@example.org"],
      ["flu-watch", "*", "team@example.org"],
      // subscribed to the type and to everything: still one mail per notification
      ["flu-watch", "*", "lena@example.org"],
      ["diet-study", "symptom-report", "diet@example.org"],
    ];
    for (const [studyKey, messageType, email] of subscriptions) {
      await addSubscription(database.db, studyKey, { messageType, email }, "test");
    }
  });
  afterAll(async () => {
    await database.drop();
  });

  const outboxRound = () =>
    runOutboxOnce({ db: database.db, mailer: smtp().mailer, logger: silent, clock: () => NOW, batchSize: 100 });
  const undelivered = async () =>
    (
      await database.db
        .select({ id: researcherMessages.id })
        .from(researcherMessages)
        .where(isNull(researcherMessages.deliveredAt))
    ).length;
  const mailsTo = () => {
    const counts: Record<string, number> = {};
    for (const mail of smtp().received) for (const to of mail.envelopeTo) counts[to] = (counts[to] ?? 0) + 1;
    return counts;
  };

  it("reaches exactly the subscribers of the study and type (or '*'), once each; a second run sends nothing", async () => {
    const ctx = { clock: () => NOW };
    await submitResponse(
      database.db,
      { studyKey: "flu-watch", participantId: "p-7f3a", response: weekly("cough", "37.0"), submittedBy: "test" },
      ctx,
    );
    expect(await undelivered()).toBe(0); // no fever, no notification
    await submitResponse(
      database.db,
      { studyKey: "flu-watch", participantId: "p-7f3a", response: weekly("fever", "39.2"), submittedBy: "test" },
      ctx,
    );
    // the other study's notification, and one of a type nobody there subscribed to (the other
    // study has no "*" subscriber)
    await database.db.insert(researcherMessages).values([
      { studyKey: "diet-study", participantId: "d-1", type: "symptom-report", payload: { symptom: "nausea" } },
      { studyKey: "diet-study", participantId: "d-1", type: "unwatched", payload: {} },
    ]);
    expect(await undelivered()).toBe(3);

    expect(await queueResearcherNotifications(database.db, NOW)).toEqual({ delivered: 3, mails: 4 });
    expect(await undelivered()).toBe(0);
    const delivered = await database.db.select().from(researcherMessages);
    expect(delivered.every((row) => row.deliveredAt?.getTime() === NOW)).toBe(true);

    const round = await outboxRound();
    expect(round).toMatchObject({ sent: 4, failed: 0, retrying: 0 });
    expect(mailsTo()).toEqual({
      "lena@example.org": 1,
      "max@example.org": 1,
      "team@example.org": 1,
      "diet@example.org": 1,
    });
    const fluMail = smtp().received.find((mail) => mail.envelopeTo[0] === "max@example.org")!;
    expect(fluMail.subject).toBe("studyflow: symptom-report (study flu-watch)");
    for (const line of ["participant: p-7f3a (pseudonymous id in this study)", "symptom: fever", "temperature: 39.2"]) {
      expect(bodyOf(fluMail)).toContain(line);
    }
    expect(bodyOf(fluMail)).toContain('subscribed to "symptom-report" notifications of study "flu-watch"');
    const teamMail = smtp().received.find((mail) => mail.envelopeTo[0] === "team@example.org")!;
    expect(bodyOf(teamMail)).toContain('subscribed to every notification of study "flu-watch"');
    const dietMail = smtp().received.find((mail) => mail.envelopeTo[0] === "diet@example.org")!;
    expect(dietMail.subject).toBe("studyflow: symptom-report (study diet-study)");
    expect(bodyOf(dietMail)).toContain("symptom: nausea");
    expect(bodyOf(dietMail)).not.toContain("flu-watch");

    const rows = await database.db.select().from(outgoingMessages);
    expect(
      rows.map((row) => [row.template, row.toAddress, row.studyKey, row.confidentialId, row.status]).sort(),
    ).toEqual(
      [
        [RESEARCHER_NOTIFICATION_TEMPLATE, "diet@example.org", "diet-study", null, "sent"],
        [RESEARCHER_NOTIFICATION_TEMPLATE, "lena@example.org", "flu-watch", null, "sent"],
        [RESEARCHER_NOTIFICATION_TEMPLATE, "max@example.org", "flu-watch", null, "sent"],
        [RESEARCHER_NOTIFICATION_TEMPLATE, "team@example.org", "flu-watch", null, "sent"],
      ].sort(),
    );
    const toLena = rows.find((row) => row.toAddress === "lena@example.org")!;
    expect(toLena.payload).toMatchObject({
      studyKey: "flu-watch",
      messageType: "symptom-report",
      participantId: "p-7f3a",
      subscribedTo: "symptom-report",
      values: { symptom: "fever", temperature: "39.2" },
    });

    expect(await queueResearcherNotifications(database.db, NOW)).toEqual({ delivered: 0, mails: 0 });
    expect(await outboxRound()).toMatchObject({ claimed: 0, sent: 0 });
    expect(smtp().received).toHaveLength(4);
  });

  it("two concurrent calls queue every notification once; a notification locked elsewhere is skipped, not waited for", async () => {
    await database.db.delete(outgoingMessages);
    // every mail takes its own SMTP connection (~0.15 s here): few notifications, batches of one
    const count = 6;
    await database.db.insert(researcherMessages).values(
      Array.from({ length: count }, (_, i) => ({
        studyKey: "flu-watch",
        participantId: `p-${i}`,
        type: "symptom-report",
        payload: { n: String(i) },
      })),
    );
    const [first, second] = await Promise.all([
      queueResearcherNotifications(database.db, NOW, { batchSize: 1, maxBatches: 100 }),
      queueResearcherNotifications(database.db, NOW, { batchSize: 1, maxBatches: 100 }),
    ]);
    expect(first.delivered + second.delivered).toBe(count);
    expect(first.mails + second.mails).toBe(count * 3);
    const perNotification = await database.db
      .select({
        notification: sql<string>`${outgoingMessages.payload}->>'notificationId'`,
        to: outgoingMessages.toAddress,
        copies: sql<number>`count(*)::int`,
      })
      .from(outgoingMessages)
      .groupBy(sql`1`, outgoingMessages.toAddress);
    expect(perNotification).toHaveLength(count * 3);
    expect(perNotification.every((row) => row.copies === 1)).toBe(true);

    expect(await outboxRound()).toMatchObject({ claimed: count * 3, sent: count * 3 });
    expect(mailsTo()).toEqual({ "lena@example.org": count, "max@example.org": count, "team@example.org": count });

    // A notification another transaction holds is left to it: the call neither waits nor takes it.
    const [held] = await database.db
      .insert(researcherMessages)
      .values({ studyKey: "flu-watch", participantId: "p-held", type: "kit-request", payload: {} })
      .returning();
    await database.db.transaction(async (tx) => {
      await tx.select().from(researcherMessages).where(eq(researcherMessages.id, held!.id)).for("update");
      expect(await queueResearcherNotifications(database.db, NOW)).toEqual({ delivered: 0, mails: 0 });
    });
    expect(await queueResearcherNotifications(database.db, NOW)).toEqual({ delivered: 1, mails: 3 });
    const kitMails = await database.db
      .select({ to: outgoingMessages.toAddress })
      .from(outgoingMessages)
      .where(
        and(eq(outgoingMessages.status, "pending"), sql`${outgoingMessages.payload}->>'messageType' = 'kit-request'`),
      );
    expect(kitMails.map((row) => row.to).sort()).toEqual([
      "lena@example.org",
      "logistics@example.org",
      "team@example.org",
    ]);
  });
});

describe("the researcher notification e-mail", () => {
  const payload = {
    notificationId: "12",
    studyKey: "flu-watch",
    messageType: "symptom-report",
    participantId: "p-7f3a",
    raisedAt: "2031-05-01T09:30:00.000Z",
    subscribedTo: "*",
    values: { temperature: "39.2", note: '<img src=x onerror="alert(1)">\r\nparticipant: forged', symptom: "fever" },
  };

  it("names study, type and participant pseudonym, lists the values in key order, and says why it was sent", () => {
    const mail = renderResearcherNotification(payload);
    expect(mail.subject).toBe("studyflow: symptom-report (study flu-watch)");
    expect(mail.text).toBe(
      [
        'A rule of study "flu-watch" sent a researcher notification of type "symptom-report".',
        "",
        "study: flu-watch",
        "type: symptom-report",
        "participant: p-7f3a (pseudonymous id in this study)",
        "raised at: 2031-05-01T09:30:00.000Z",
        "",
        'note: <img src=x onerror="alert(1)"> participant: forged',
        "symptom: fever",
        "temperature: 39.2",
        "",
        'You receive this because this address is subscribed to every notification of study "flu-watch". A study manager can remove the subscription.',
        "",
      ].join("\n"),
    );
    expect(mail.html).toContain(
      "<li><strong>note</strong>: &lt;img src=x onerror=&quot;alert(1)&quot;&gt; participant: forged</li>",
    );
    expect(mail.html).not.toContain("<img");
  });

  it("shows the notification's own fields and values only: anything else in the payload stays out", () => {
    const mail = renderResearcherNotification({
      ...payload,
      "flags.diagnosis": "erythema-5521",
      "linkingCodes.labId": "LAB-7731-QX",
      email: "participant@example.org",
      // values that are not text have no place in the mail either
      values: { symptom: "fever", nested: { labId: "LAB-7731-QX" } as unknown as string },
    });
    const shown = `${mail.subject}\n${mail.text}\n${mail.html}`;
    for (const value of ["erythema-5521", "LAB-7731-QX", "participant@example.org", "labId", "diagnosis"]) {
      expect(shown).not.toContain(value);
    }
    expect(mail.text).toContain("symptom: fever");
  });

  it("keeps the subject on one line and fails a payload without study or type as undeliverable", () => {
    const mail = renderResearcherNotification({ ...payload, messageType: "a\r\nBcc: x@example.org", values: {} });
    expect(mail.subject).toBe("studyflow: a Bcc: x@example.org (study flu-watch)");
    expect(mail.text).toContain("The notification carries no values.");
    expect(() => renderResearcherNotification({ ...payload, studyKey: undefined })).toThrow(
      "researcher notification has no studyKey in its payload",
    );
    expect(() => renderResearcherNotification({ ...payload, messageType: " " })).toThrow(
      /UndeliverableMessage|messageType/,
    );
  });
});
