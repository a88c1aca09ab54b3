import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, participantMessageSchedule } from "@studyflow/db";
import { insertParticipant, managementToken, readParticipant, researcher, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

const updateParticipant = caseAdminCall("updateParticipant");

describe("case-admin participant editor: PUT …/participants/{participantID} (replayed as case-admin sends it)", () => {
  let t: TestApp;
  let admin: string;
  let editor: { subject: string; token: string };
  let reader: { subject: string; token: string };

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    admin = await managementToken(t, "root", true);
    editor = await researcher(t, "flu", "edit-participant-data");
    reader = await researcher(t, "flu", "get-participant-states");
    await insertParticipant(t.database.db, {
      studyKey: "flu",
      participantId: "p1",
      enteredAt: 1_700_000_000,
      modifiedAt: 1_700_000_100,
      flags: { group: "a" },
      messages: [{ id: "m1", type: "reminder", scheduledFor: 1_800_000_000 }],
    });
    await insertParticipant(t.database.db, {
      studyKey: "flu",
      participantId: "linked",
      hashedAccountId: "acc-hash",
      isMainProfile: true,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  /** What case-admin read from the data explorer: its ParticipantState after pStateFromAPI. */
  async function asCaseAdminReads(participantID: string) {
    const res = await t.app.request(`/v1/studies/flu/data-explorer/participants/${participantID}`, {
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()).participant as Record<string, any>;
  }

  const schedule = (participantId: string) =>
    t.database.db
      .select({ messageId: participantMessageSchedule.messageId, dueAt: participantMessageSchedule.dueAt })
      .from(participantMessageSchedule)
      .where(
        and(
          eq(participantMessageSchedule.studyKey, "flu"),
          eq(participantMessageSchedule.participantId, participantId),
        ),
      );

  it("saves the edited state: 200 {message, participant}, message schedule in sync, audited", async () => {
    const read = await asCaseAdminReads("p1");
    const edited = {
      ...read,
      studyStatus: "paused",
      flags: { group: "b", extra: "1" },
      linkingCodes: { kit: "K-1" },
      assignedSurveys: [
        { surveyKey: "weekly", validFrom: 0, validUntil: 0, category: "prio", studyKey: "flu", profileId: "" },
      ],
      lastSubmissions: { intake: 1_700_000_050 },
      messages: [{ id: "m2", type: "followup", scheduledFor: 1_900_000_000 }],
    };
    const answer = await replayCaseAdminCall(t, updateParticipant, {
      params: { studyKey: "flu", "participant.participantId": "p1" },
      body: edited,
      token: editor.token,
    });
    expect(answer.status).toBe(200);
    expect(answer.failed).toBe(false);
    expect(answer.body.message).toBe("participant updated");
    expect(answer.body.participant).toMatchObject({
      participantId: "p1",
      studyStatus: "paused",
      flags: { group: "b", extra: "1" },
      linkingCodes: { kit: "K-1" },
      lastSubmissions: { intake: 1_700_000_050 },
      messages: [{ id: "m2", type: "followup", scheduledFor: 1_900_000_000 }],
      assignedSurveys: [{ surveyKey: "weekly", category: "prio", studyKey: "flu" }],
    });
    expect(answer.body.participant.modifiedAt).toBeGreaterThan(1_700_000_100);
    const stored = await readParticipant(t.database.db, "flu", "p1");
    expect(stored).toMatchObject({
      studyStatus: "paused",
      flags: { group: "b", extra: "1" },
      enteredAt: 1_700_000_000,
    });
    expect(await schedule("p1")).toEqual([{ messageId: "m2", dueAt: 1_900_000_000 }]);
    const [entry] = await t.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "participant.update"), eq(auditLog.target, "p1")));
    expect(entry).toMatchObject({ studyKey: "flu", actor: editor.subject });
    expect(entry?.details).toMatchObject({ studyStatus: ["active", "paused"] });
    expect((entry?.details as { changed: string[] }).changed).toEqual(
      expect.arrayContaining(["studyStatus", "flags", "linkingCodes", "messages"]),
    );
  });

  it("409 when the participant changed after the state was read; modifiedAt 0 skips the check", async () => {
    const read = await asCaseAdminReads("p1");
    const stale = { ...read, modifiedAt: read.modifiedAt - 1, flags: { stale: "yes" } };
    const before = await readParticipant(t.database.db, "flu", "p1");
    const refused = await replayCaseAdminCall(t, updateParticipant, {
      params: { studyKey: "flu", "participant.participantId": "p1" },
      body: stale,
      token: editor.token,
    });
    expect(refused.status).toBe(409);
    expect(refused.failed).toBe(true);
    expect(await readParticipant(t.database.db, "flu", "p1")).toEqual(before);
    const forced = await replayCaseAdminCall(t, updateParticipant, {
      params: { studyKey: "flu", "participant.participantId": "p1" },
      body: { ...stale, modifiedAt: 0 },
      token: editor.token,
    });
    expect(forced.status).toBe(200);
    expect((await readParticipant(t.database.db, "flu", "p1"))?.flags).toEqual({ stale: "yes" });
  });

  it("keeps the account link: the same values pass, changed ones are 400", async () => {
    const read = await asCaseAdminReads("linked");
    expect(read).toMatchObject({ hashedAccountID: "acc-hash", isMainProfile: true });
    const params = { studyKey: "flu", "participant.participantId": "linked" };
    const same = await replayCaseAdminCall(t, updateParticipant, {
      params,
      body: { ...read, flags: { ok: "1" } },
      token: editor.token,
    });
    expect(same.status).toBe(200);
    for (const [field, value] of [
      ["hashedAccountID", "other-hash"],
      ["isMainProfile", false],
    ] as const) {
      const changed = await replayCaseAdminCall(t, updateParticipant, {
        params,
        body: { ...read, modifiedAt: 0, [field]: value },
        token: editor.token,
      });
      expect(changed.status).toBe(400);
      expect(changed.body.error).toMatch(new RegExp(field));
    }
    expect(await readParticipant(t.database.db, "flu", "linked")).toMatchObject({
      hashedAccountId: "acc-hash",
      isMainProfile: true,
      flags: { ok: "1" },
    });
  });

  it("400 naming the field, 401, 403 and 404, writing nothing", async () => {
    const read = await asCaseAdminReads("p1");
    const before = await readParticipant(t.database.db, "flu", "p1");
    const audits = async () =>
      (await t.database.db.select().from(auditLog).where(eq(auditLog.action, "participant.update"))).length;
    const auditCount = await audits();
    const params = { studyKey: "flu", "participant.participantId": "p1" };
    const cases: [unknown, RegExp][] = [
      [{ ...read, participantId: "p2" }, /participantId/],
      [{ ...read, studyStatus: "" }, /studyStatus/],
      [{ ...read, enteredAt: "yesterday" }, /enteredAt/],
      [{ ...read, flags: { a: 1 } }, /flags/],
      [{ ...read, lastSubmissions: { s: -5 } }, /lastSubmissions/],
      [{ ...read, messages: [{ id: "m", type: "t" }] }, /messages/],
      [{ ...read, assignedSurveys: [{ validFrom: 0 }] }, /assignedSurveys/],
    ];
    for (const [body, field] of cases) {
      const answer = await replayCaseAdminCall(t, updateParticipant, { params, body, token: editor.token });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatch(field);
    }
    const empty = await replayCaseAdminCall(t, updateParticipant, { params, rawBody: "", token: editor.token });
    expect(empty.status).toBe(400);
    expect((await replayCaseAdminCall(t, updateParticipant, { params, body: read })).status).toBe(401);
    expect((await replayCaseAdminCall(t, updateParticipant, { params, body: read, token: reader.token })).status).toBe(
      403,
    );
    const nobody = await replayCaseAdminCall(t, updateParticipant, {
      params: { studyKey: "flu", "participant.participantId": "nobody" },
      body: { ...read, participantId: "nobody" },
      token: editor.token,
    });
    expect(nobody.status).toBe(404);
    const noStudy = await replayCaseAdminCall(t, updateParticipant, {
      params: { studyKey: "nope", "participant.participantId": "p1" },
      body: read,
      token: admin,
    });
    expect(noStudy.status).toBe(404);
    expect(await readParticipant(t.database.db, "flu", "p1")).toEqual(before);
    expect(await readParticipant(t.database.db, "flu", "nobody")).toBeUndefined();
    expect(await audits()).toBe(auditCount);
  });
});
