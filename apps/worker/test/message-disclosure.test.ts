// A message shows the participant's data only as far as its study's template names it: without a
// template nothing is sent (SEND_MESSAGE_NOW fails as a rule, a due message fails in the outbox),
// and a researcher notification carries only what its rule put in it. End to end, over SMTP.
import { and, eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { outgoingMessages, participants, ruleFailures, surveyResponses } from "@studyflow/db";
import { RuleFailed } from "@studyflow/domain/errors";
import { enterStudy, listRuleFailures, submitResponse, type DomainContext } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { deleteMessageTemplate, setMessageTemplate } from "@studyflow/domain/messages";
import { addSubscription } from "@studyflow/domain/notifications";
import { listStudyMessages } from "@studyflow/domain/outbox";
import { confidentialIdOf, participantIdsForProfile } from "@studyflow/domain/participants";
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
import { runOutboxOnce } from "../src/outbox/outbox-delivery";
import { smtpCapturePerTest, type CapturedMail } from "./smtp-capture";
import { createWorkerHarness, onCustom, readResult, type WorkerHarness } from "./worker-harness";

const silent = pino({ level: "silent" });
const T0 = Date.UTC(2032, 5, 1, 8, 0, 0);
const DUE = T0 / 1000 + 3_600;
const AFTER_DUE = (DUE + 60) * 1000;
const ctx: DomainContext = { clock: () => T0 };

/** Distinctive values: found anywhere in a mail, they were disclosed. */
const INTAKE = "intake-done-4711";
const DIAGNOSIS = "erythema-5521";
const LAB_CODE = "LAB-7731-QX";
const NEVER_SHOWN = [DIAGNOSIS, LAB_CODE, "diagnosis", "labId", "linkingCodes", "flags."];

/** Everything a recipient could read: subject, both bodies, the raw message (headers included). */
const everything = (mail: CapturedMail) => `${mail.subject}\n${mail.text}\n${mail.html}\n${mail.raw}`;

const onSurvey = (key: string, ...actions: Expression[]) =>
  onEvent("SUBMIT", call("IFTHEN", exp(call("checkSurveyResponseKey", str(key))), ...actions.map(exp)));

const RULES = [
  onEvent(
    "ENTER",
    call("UPDATE_FLAG", str("intakeDone"), str(INTAKE)),
    call("UPDATE_FLAG", str("diagnosis"), str(DIAGNOSIS)),
    call("SET_LINKING_CODE", str("labId"), str(LAB_CODE)),
  ),
  onSurvey("welcome", call("SEND_MESSAGE_NOW", str("welcome"))),
  // the lab result has no template: its message fails, the rest of the rule stands
  onSurvey(
    "lab",
    call("UPDATE_FLAG", str("labSubmitted"), str("yes")),
    call("SEND_MESSAGE_NOW", str("lab-result")),
    call("UPDATE_FLAG", str("afterMessage"), str("yes")),
  ),
  onSurvey("vanishing", call("SEND_MESSAGE_NOW", str("vanishing"))),
  onSurvey("schedule", call("ADD_MESSAGE", str("reminder"), num(DUE)), call("ADD_MESSAGE", str("late-note"), num(DUE))),
  onSurvey(
    "tick",
    call("NOTIFY_RESEARCHER", str("tick-bite"), str("bodyPart"), str("left-arm-2231"), str("size"), str("3 cm")),
  ),
];

describe("participant messages disclose only what their study's template names", () => {
  let database: TestDatabase;
  const smtp = smtpCapturePerTest();
  let secret: string;
  let strictSecret: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ secret } = await createStudy(database.db, { key: "lyme" }));
    ({ secret: strictSecret } = await createStudy(database.db, {
      key: "lyme-strict",
      settings: { strictRules: true },
    }));
    await database.db.execute(
      // the study's name, as templates show it
      `update studies set props = '{"name": {"en": "Lyme watch"}}'::jsonb where key = 'lyme'`,
    );
    await setStudyRules(database.db, "lyme", RULES, "test");
    await setStudyRules(database.db, "lyme-strict", RULES, "test");
    const templates = [
      ["welcome", "Welcome to {{studyName}}", "Your intake: {{flags.intakeDone}}.\nThank you."],
      ["reminder", "{{studyName}}: reminder", "Intake {{flags.intakeDone}}; code {{linkingCodes.missing}}."],
      ["vanishing", "Soon gone", "Intake {{flags.intakeDone}}"],
    ] as const;
    for (const studyKey of ["lyme", "lyme-strict"]) {
      for (const [messageType, subject, body] of templates) {
        await setMessageTemplate(database.db, { studyKey, messageType, language: "en", subject, body }, "test", {
          clock: systemClock,
        });
      }
    }
    await addSubscription(database.db, "lyme", { messageType: "tick-bite", email: "researcher@example.org" }, "test");
  });
  afterAll(async () => {
    await database.drop();
  });

  const round = (nowMs: number) =>
    runOutboxOnce({
      db: database.db,
      mailer: smtp().mailer,
      logger: silent,
      clock: () => nowMs,
      batchSize: 50,
      participantMessagesPerRound: 50,
    });

  /** A participant with an account, entered at T0: flags and a lab linking code set. */
  async function participant(name: string, studyKey = "lyme") {
    const email = `${name}@example.org`;
    const { user, profiles } = await createUserWithProfiles(database.db, {
      now: new Date(),
      email,
      password: STRONG_PASSWORD,
      preferredLanguage: "en",
    });
    const profile = profiles[0]!;
    await enterStudy(database.db, { studyKey, userId: user.id, profile }, ctx);
    const studySecret = studyKey === "lyme" ? secret : strictSecret;
    const { participantId } = participantIdsForProfile(studySecret, profile.id);
    return { email, participantId, confidentialId: confidentialIdOf(studySecret, participantId) };
  }

  const submit = (participantId: string, key: string, studyKey = "lyme", at = T0) =>
    submitResponse(
      database.db,
      { studyKey, participantId, response: { key }, submittedBy: "test" },
      { clock: () => at },
    );

  const outboxRows = (studyKey: string, template: string) =>
    database.db
      .select()
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.studyKey, studyKey), eq(outgoingMessages.template, template)));

  async function stateOf(studyKey: string, participantId: string) {
    const [row] = await database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)));
    return row!;
  }

  it("SEND_MESSAGE_NOW with a template: the mail shows the flag the template names, no other flag, no linking code", async () => {
    const anna = await participant("anna");
    expect((await stateOf("lyme", anna.participantId)).linkingCodes).toEqual({ labId: LAB_CODE });
    await submit(anna.participantId, "welcome");
    // the row holds the participant's values, for the template to pick from
    const [queued] = await outboxRows("lyme", "welcome");
    expect(queued?.payload).toMatchObject({ "flags.diagnosis": DIAGNOSIS, "linkingCodes.labId": LAB_CODE });

    expect(await round(T0 + 1_000)).toMatchObject({ sent: 1, failed: 0 });
    const [mail] = smtp().mailsTo(anna.email);
    expect(mail?.subject).toBe("Welcome to Lyme watch");
    expect(mail?.text.replace(/\r\n/g, "\n")).toBe(`Your intake: ${INTAKE}.\nThank you.\n`);
    expect(mail?.html.replace(/\r\n/g, "\n")).toContain(`<p>Your intake: ${INTAKE}.<br>\nThank you.</p>`);
    for (const secretValue of NEVER_SHOWN) expect(everything(mail!)).not.toContain(secretValue);
  });

  it("SEND_MESSAGE_NOW without a template: nothing reaches SMTP, a failed outbox row and a rule failure name the template, the response and the rule's other actions are kept", async () => {
    const bert = await participant("bert");
    const { participant: after, responseId, warnings } = await submit(bert.participantId, "lab");

    // the event went on: response stored, the actions before and after the message applied
    expect(after.flags).toMatchObject({ labSubmitted: "yes", afterMessage: "yes", intakeDone: INTAKE });
    expect(after.lastSubmissions).toHaveProperty("lab");
    const [response] = await database.db.select().from(surveyResponses).where(eq(surveyResponses.id, responseId!));
    expect(response).toMatchObject({ key: "lab", participantId: bert.participantId });

    // the rule failure, as researchers list it, names the missing template
    const reason = noTemplateError("lyme", "lab-result");
    expect(reason).toBe(
      'no template for message type "lab-result" in study "lyme" (save one as a study e-mail template with ' +
        "POST /v1/messaging/email-templates/study-templates/lyme, or upload one with " +
        "PUT /v1/studies/lyme/message-templates/lab-result/{language}); the message was not sent",
    );
    const expected = {
      studyKey: "lyme",
      participantId: bert.participantId,
      eventType: "SUBMIT",
      eventKey: "lab",
      ruleIndex: 2,
      path: "rules[2].data[1].exp.data[2].exp",
      message: `SEND_MESSAGE_NOW: ${reason}`,
      outcome: "action-skipped",
    };
    expect(warnings).toEqual([expect.objectContaining(expected)]);
    const failures = await listRuleFailures(database.db, {
      studyKey: "lyme",
      participantId: bert.participantId,
      limit: 10,
    });
    expect(failures).toEqual([expect.objectContaining(expected)]);

    // the outbox shows it failed, with the reason, and the study's messages list it
    const rows = await outboxRows("lyme", "lab-result");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: "failed",
      attempts: 0,
      lastError: reason,
      confidentialId: bert.confidentialId,
      expiresAt: new Date(T0 + 24 * 3_600_000),
    });
    const failed = await listStudyMessages(database.db, "lyme", { limit: 50, status: "failed" });
    expect(failed.items.filter((message) => message.template === "lab-result")).toEqual([
      expect.objectContaining({ id: rows[0]!.id, status: "failed", lastError: reason }),
    ]);

    // and nothing is sent, now or later
    expect(await round(T0 + 1_000)).toMatchObject({ claimed: 0, sent: 0 });
    expect(await round(T0 + 3_600_000)).toMatchObject({ claimed: 0, sent: 0 });
    expect(smtp().connections()).toBe(0);
    expect(smtp().mailsTo(bert.email)).toEqual([]);
  });

  it("a strict study rejects such an event whole: nothing stored, nothing sent, the failure recorded", async () => {
    const cleo = await participant("cleo", "lyme-strict");
    const before = await stateOf("lyme-strict", cleo.participantId);
    const rejected = submit(cleo.participantId, "lab", "lyme-strict");
    await expect(rejected).rejects.toBeInstanceOf(RuleFailed);
    await expect(rejected).rejects.toThrow('no template for message type "lab-result" in study "lyme-strict"');

    expect(await stateOf("lyme-strict", cleo.participantId)).toEqual(before);
    expect(
      await database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, cleo.participantId)),
    ).toEqual([]);
    // the failed row went with the rolled-back event; the failure is recorded on its own
    expect(await outboxRows("lyme-strict", "lab-result")).toEqual([]);
    const failures = await database.db
      .select()
      .from(ruleFailures)
      .where(and(eq(ruleFailures.studyKey, "lyme-strict"), eq(ruleFailures.participantId, cleo.participantId)));
    expect(failures).toEqual([
      expect.objectContaining({
        outcome: "event-rejected",
        message: `SEND_MESSAGE_NOW: ${noTemplateError("lyme-strict", "lab-result")}`,
      }),
    ]);
    expect(await round(T0 + 1_000)).toMatchObject({ claimed: 0 });
    expect(smtp().connections()).toBe(0);
  });

  it("a template deleted after the message was queued: the outbox fails it with the reason, nothing reaches SMTP", async () => {
    const dana = await participant("dana");
    await submit(dana.participantId, "vanishing");
    const [queued] = await outboxRows("lyme", "vanishing");
    expect(queued).toMatchObject({ status: "pending" });
    await deleteMessageTemplate(database.db, { studyKey: "lyme", messageType: "vanishing", language: "en" }, "test");

    expect(await round(T0 + 1_000)).toMatchObject({ claimed: 1, failed: 1, sent: 0 });
    expect((await outboxRows("lyme", "vanishing"))[0]).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: noTemplateError("lyme", "vanishing"),
    });
    expect(smtp().connections()).toBe(0);
  });

  it("ADD_MESSAGE: when due, the templated one shows only what it names; the one without a template fails in the outbox and sends nothing", async () => {
    const emil = await participant("emil");
    await submit(emil.participantId, "schedule");
    expect((await stateOf("lyme", emil.participantId)).messages.map((m) => m.type).sort()).toEqual([
      "late-note",
      "reminder",
    ]);

    expect(await round(AFTER_DUE)).toMatchObject({
      participantMessages: 1,
      participantMessagesWithoutTemplate: 1,
      sent: 1,
      failed: 0,
    });
    const mails = smtp().mailsTo(emil.email);
    expect(mails.map((mail) => mail.subject)).toEqual(["Lyme watch: reminder"]);
    // a named value the participant does not have renders empty; nothing else takes its place
    expect(mails[0]!.text.replace(/\r\n/g, "\n")).toBe(`Intake ${INTAKE}; code .\n`);
    for (const secretValue of NEVER_SHOWN) expect(everything(mails[0]!)).not.toContain(secretValue);

    const [orphan] = await outboxRows("lyme", "late-note");
    expect(orphan).toMatchObject({ status: "failed", lastError: noTemplateError("lyme", "late-note") });
    // the participant's data stays; the due messages are gone from it either way
    const after = await stateOf("lyme", emil.participantId);
    expect(after.messages).toEqual([]);
    expect(after.linkingCodes).toEqual({ labId: LAB_CODE });

    expect(await round(AFTER_DUE + 60_000)).toMatchObject({ claimed: 0, participantMessages: 0 });
    expect(smtp().mailsTo(emil.email)).toHaveLength(1);
  });

  it("a researcher notification carries what its rule put in it, the study and the type; no flag or linking code", async () => {
    const fina = await participant("fina");
    await submit(fina.participantId, "tick");
    expect(await round(T0 + 1_000)).toMatchObject({ notifications: 1, sent: 1 });

    const [mail] = smtp().mailsTo("researcher@example.org");
    expect(mail?.subject).toBe("studyflow: tick-bite (study lyme)");
    const text = mail!.text.replace(/\r\n/g, "\n");
    expect(text).toContain('A rule of study "lyme" sent a researcher notification of type "tick-bite".');
    expect(text).toContain(`participant: ${fina.participantId} (pseudonymous id in this study)`);
    expect(text).toContain("bodyPart: left-arm-2231\nsize: 3 cm");
    for (const secretValue of [INTAKE, ...NEVER_SHOWN]) expect(everything(mail!)).not.toContain(secretValue);
    // nobody else hears of it, the participant least of all
    expect(smtp().received).toHaveLength(1);
  });
});

describe("SEND_MESSAGE_NOW without a template in a bulk run-actions task", () => {
  let h: WorkerHarness;
  beforeEach(async () => {
    h = await createWorkerHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const rules = [onCustom(call("UPDATE_FLAG", str("bulk"), str("done")), call("SEND_MESSAGE_NOW", str("lab-result")))];

  async function bulkStudy(key: string) {
    const { secret } = await createStudy(h.database.db, { key });
    const ids = ["p1", "p2", "p3"];
    await h.database.db.insert(participants).values(
      ids.map((participantId) => ({
        studyKey: key,
        participantId,
        studyStatus: "active",
        enteredAt: 1,
        modifiedAt: 1,
        flags: { diagnosis: DIAGNOSIS },
        linkingCodes: { labId: LAB_CODE },
      })),
    );
    return { secret, ids };
  }

  it("each participant's message is refused and recorded, its other action kept", async () => {
    const { secret, ids } = await bulkStudy("bulk-lyme");
    h.start({ batchSize: 2 });
    const task = await h.waitForTask(await h.createTask("bulk-lyme", rules), ["completed", "failed"]);
    expect(task.status).toBe("completed");
    const reason = noTemplateError("bulk-lyme", "lab-result");
    expect(await readResult(h, task.resultFile)).toMatchObject({
      participantCount: 3,
      participantStateChangedPerRule: [3],
      errorCount: 3,
    });

    const states = await h.database.db.select().from(participants).where(eq(participants.studyKey, "bulk-lyme"));
    expect(states.map((row) => row.flags)).toEqual(ids.map(() => ({ diagnosis: DIAGNOSIS, bulk: "done" })));
    const rows = await h.database.db.select().from(outgoingMessages).where(eq(outgoingMessages.studyKey, "bulk-lyme"));
    expect(rows.map((row) => [row.confidentialId, row.status, row.lastError]).sort()).toEqual(
      ids.map((id) => [confidentialIdOf(secret, id), "failed", reason]).sort(),
    );
    const failures = await h.database.db.select().from(ruleFailures).where(eq(ruleFailures.studyKey, "bulk-lyme"));
    expect(failures.map((failure) => [failure.participantId, failure.outcome, failure.message]).sort()).toEqual(
      ids.map((id) => [id, "action-skipped", `SEND_MESSAGE_NOW: ${reason}`]).sort(),
    );
  });

  it("a dry run records no refused message", async () => {
    await bulkStudy("bulk-dry");
    h.start({ batchSize: 2 });
    const task = await h.waitForTask(await h.createTask("bulk-dry", rules, true), ["completed", "failed"]);
    expect(task.status).toBe("completed");
    expect(await readResult(h, task.resultFile)).toMatchObject({ participantCount: 3, errorCount: 3, dryRun: true });
    expect(await h.database.db.select().from(outgoingMessages)).toEqual([]);
    expect(await h.database.db.select().from(ruleFailures)).toEqual([]);
  });
});
