import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, participants, reports, surveyResponses } from "@studyflow/db";
import { leaveStudy, submitResponse } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { setMessageTemplate } from "@studyflow/domain/messages";
import { confidentialIdOf, participantIdsForProfile } from "@studyflow/domain/participants";
import { SEND_MESSAGE_NOW_VALIDITY_MS } from "@studyflow/domain/rules";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, exp, num, onEvent, str, type TestDatabase } from "@studyflow/testkit";

const NOW = Date.UTC(2031, 4, 1, 9, 30);
const ctx = { clock: () => NOW };

/** The one event pipeline, seen through the operations that use it. */
describe("applyEvent through submit and leave", () => {
  let database: TestDatabase;
  let secret: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ secret } = await createStudy(database.db, { key: "s" }));
    await setStudyRules(
      database.db,
      "s",
      [
        onEvent(
          "SUBMIT",
          call("UPDATE_FLAG", str("submitted"), str("yes")),
          call("SEND_MESSAGE_NOW", str("thank-you")),
          call("INIT_REPORT", str("submission")),
        ),
        onEvent(
          "LEAVE",
          call(
            "IF",
            exp(call("hasStudyStatus", str("exited"))),
            exp(call("UPDATE_FLAG", str("sawExited"), str("yes"))),
          ),
        ),
      ],
      "test",
    );
    // SEND_MESSAGE_NOW sends only a type the study has a template for
    await setMessageTemplate(
      database.db,
      { studyKey: "s", messageType: "thank-you", language: "en", subject: "Thanks", body: "Thank you." },
      "test",
      { clock: systemClock },
    );
  });
  afterAll(async () => {
    await database.drop();
  });

  it("commits state, response, report and a day-long SEND_MESSAGE_NOW message together", async () => {
    await database.db
      .insert(participants)
      .values({ studyKey: "s", participantId: "p1", studyStatus: "active", enteredAt: 100, modifiedAt: 100 });
    const { participant, responseId } = await submitResponse(
      database.db,
      { studyKey: "s", participantId: "p1", response: { key: "intake" }, submittedBy: "tester" },
      ctx,
    );
    expect(participant.flags).toEqual({ submitted: "yes" });
    expect(participant.modifiedAt).toBe(NOW / 1000);
    const [stored] = await database.db.select().from(surveyResponses).where(eq(surveyResponses.id, responseId!));
    expect(stored).toMatchObject({ key: "intake", participantId: "p1", arrivedAt: NOW / 1000 });
    const [report] = await database.db.select().from(reports).where(eq(reports.participantId, "p1"));
    expect(report).toMatchObject({ key: "submission", eventType: "SUBMIT", responseId });
    const [message] = await database.db.select().from(outgoingMessages);
    expect(message).toMatchObject({
      template: "thank-you",
      studyKey: "s",
      confidentialId: confidentialIdOf(secret, "p1"),
      status: "pending",
      expiresAt: new Date(NOW + SEND_MESSAGE_NOW_VALIDITY_MS),
    });
    expect(SEND_MESSAGE_NOW_VALIDITY_MS).toBe(24 * 3_600_000);
  });

  it("the study's time zone reaches the calendar functions of its rules", async () => {
    const rules = [
      onEvent(
        "SUBMIT",
        call(
          "UPDATE_FLAG",
          str("local"),
          exp(call("dateToStr", exp(call("timestampWithOffset", num(0))), str("yyyy-MM-dd HH:mm"))),
        ),
      ),
    ];
    for (const [key, timeZone, expected] of [
      ["tz-utc", undefined, "2031-05-01 09:30"],
      ["tz-ams", "Europe/Amsterdam", "2031-05-01 11:30"],
      ["tz-ny", "America/New_York", "2031-05-01 05:30"],
    ] as const) {
      await createStudy(database.db, { key, ...(timeZone ? { settings: { timeZone } } : {}) });
      await setStudyRules(database.db, key, rules, "test");
      await database.db
        .insert(participants)
        .values({ studyKey: key, participantId: "p", studyStatus: "active", enteredAt: 100, modifiedAt: 100 });
      const { participant } = await submitResponse(
        database.db,
        { studyKey: key, participantId: "p", response: { key: "s" }, submittedBy: "tester" },
        ctx,
      );
      expect(participant.flags["local"], key).toBe(expected);
    }
  });

  it("LEAVE rules see the status the pipeline presets and keep their changes", async () => {
    const profileId = "0b1f6a52-8f44-4bde-9d59-1c2f1f0f7a11";
    const { participantId } = participantIdsForProfile(secret, profileId);
    await database.db
      .insert(participants)
      .values({ studyKey: "s", participantId, studyStatus: "active", enteredAt: 1234, modifiedAt: 1234 });
    const { participant } = await leaveStudy(database.db, { studyKey: "s", profileId }, ctx);
    expect(participant).toMatchObject({ studyStatus: "exited", flags: { sawExited: "yes" } });
  });
});
