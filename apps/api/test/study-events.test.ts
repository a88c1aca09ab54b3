import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialIdMap, confidentialResponses, participants, reports, surveyResponses, users } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { confidentialIdOf } from "@studyflow/domain/participants";
import {
  call,
  exp,
  insertParticipant,
  num,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;

const rules = [
  onEvent(
    "ENTER",
    call("ADD_NEW_SURVEY", str("intake"), num(0), num(0), str("prio")),
    call("INIT_REPORT", str("entered")),
  ),
  onEvent("LEAVE", call("REMOVE_ALL_SURVEYS"), call("INIT_REPORT", str("left"))),
  onEvent(
    "MERGE",
    call(
      "IF",
      exp(call("incomingState:hasParticipantFlagKey", str("consent"))),
      exp(call("UPDATE_FLAG", str("consent"), exp(call("incomingState:getParticipantFlagValue", str("consent"))))),
    ),
    call("INIT_REPORT", str("merged")),
  ),
  onEvent("SUBMIT", call("UPDATE_FLAG", str("submitted"), str("yes"))),
];

const events = (study: string, what: string) => `/v1/study-service/events/${study}/${what}`;

describe("participant study events", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-a", rules, trackAccount: true });
    await setupStudy(t, { key: "study-off", status: "inactive" });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from reports`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from confidential_responses`;
  });

  describe("enter", () => {
    it("creates the participant, runs ENTER, stores the account HMAC of a tracking study", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const child = user.profiles[1]!;
      const res = await postJson(t, events("study-a", "enter"), { profileID: child.id }, user.token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        created: true,
        warnings: [],
        assignedSurveys: [
          { surveyKey: "intake", validFrom: 0, validUntil: 0, category: "prio", studyKey: "study-a", profileID: "" },
        ],
      });
      const row = await readParticipant(t.database.db, "study-a", participantIdOf(study, child.id));
      expect(row).toMatchObject({ studyStatus: "active", enteredAt: NOW_S, isMainProfile: false });
      expect(row!.hashedAccountId).toMatch(/^[0-9a-f]{64}$/);
      expect(row!.hashedAccountId).not.toContain(user.user.email);
      expect(
        await t.database.db.select().from(confidentialIdMap).where(eq(confidentialIdMap.profileId, child.id)),
      ).toHaveLength(1);
      expect((await t.database.db.select().from(reports)).map((r) => r.eventType)).toEqual(["ENTER"]);

      const again = await postJson(t, events("study-a", "enter"), { profileID: child.id }, user.token);
      expect(await again.json()).toMatchObject({ created: false });
      expect(await t.database.db.select().from(reports)).toHaveLength(1);
    });

    it("403 for a profile of another user; 401 for a management token", async () => {
      const owner = await participantUser(t);
      const other = await participantUser(t);
      const res = await postJson(t, events("study-a", "enter"), { profileID: owner.profiles[0]!.id }, other.token);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: "profile does not belong to the signed-in user" });
      const management = await mintManagementToken({
        now: Date.now(),
        subject: owner.user.id,
        isAdmin: true,
        secret: t.config.PARTICIPANT_JWT_SECRET,
      });
      expect(
        (await postJson(t, events("study-a", "enter"), { profileID: owner.profiles[0]!.id }, management)).status,
      ).toBe(401);
      expect(await t.database.db.select().from(participants)).toHaveLength(0);
    });
  });

  describe("leave (4.5)", () => {
    it("exits, runs LEAVE, returns the surveys after the rules, removes confidential responses", async () => {
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      await postJson(t, events("study-a", "enter"), { profileID: profile.id }, user.token);
      const participantId = participantIdOf(study, profile.id);
      await t.database.db.insert(confidentialResponses).values({
        studyKey: "study-a",
        confidentialId: confidentialIdOf(study.secret, participantId),
        key: "email",
        responses: [],
      });

      const res = await postJson(t, events("study-a", "leave"), { profileID: profile.id }, user.token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ assignedSurveys: [], warnings: [] });
      expect((await readParticipant(t.database.db, "study-a", participantId))?.studyStatus).toBe("exited");
      expect(await t.database.db.select().from(confidentialResponses)).toHaveLength(0);
      expect((await t.database.db.select().from(reports)).map((r) => r.key).sort()).toEqual(["entered", "left"]);

      const again = await postJson(t, events("study-a", "leave"), { profileID: profile.id }, user.token);
      expect(again.status).toBe(409);
    });

    it("400 without profileID, 404 without participant, 409 for an inactive study, 401 without token", async () => {
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      const missing = await postJson(t, events("study-a", "leave"), {}, user.token);
      expect(missing.status).toBe(400);
      expect((await missing.json()).error).toMatch(/body\.profileID/);
      expect((await postJson(t, events("study-a", "leave"), { profileID: profile.id }, user.token)).status).toBe(404);
      expect((await postJson(t, events("study-off", "leave"), { profileID: profile.id }, user.token)).status).toBe(409);
      expect((await postJson(t, events("study-a", "leave"), { profileID: profile.id })).status).toBe(401);
    });

    it("a participant token issued before a password change is refused", async () => {
      const user = await participantUser(t);
      await t.database.db.update(users).set({ tokenVersion: 1 }).where(eq(users.id, user.user.id));
      await t.settle();
      const res = await postJson(t, events("study-a", "leave"), { profileID: user.profiles[0]!.id }, user.token);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "token revoked: sign in again" });
    });
  });

  describe("temporary participants and merge (4.4)", () => {
    async function registerTemp() {
      const res = await postJson(t, "/v1/study-service/temp-participant/register", { studyKey: "study-a" });
      expect(res.status).toBe(200);
      return (await res.json()).participant as { participantId: string; studyStatus: string };
    }

    it("registers a temporary participant with an unguessable id, running ENTER", async () => {
      const temp = await registerTemp();
      expect(temp.studyStatus).toBe("temporary");
      expect(temp.participantId).toMatch(/^[0-9a-f]{64}$/);
      expect((await postJson(t, "/v1/study-service/temp-participant/register", { studyKey: "study-off" })).status).toBe(
        409,
      );
      expect((await postJson(t, "/v1/study-service/temp-participant/register", { studyKey: "none" })).status).toBe(404);
      expect((await postJson(t, "/v1/study-service/temp-participant/register", {})).status).toBe(400);
    });

    it("merges into a new target: ENTER then MERGE rules, data moves, temp is deleted", async () => {
      const temp = await registerTemp();
      await t.database.db
        .update(participants)
        .set({ flags: { consent: "given" }, lastSubmissions: { s1: NOW_S - 50 } })
        .where(eq(participants.participantId, temp.participantId));
      await t.database.db.insert(surveyResponses).values({
        studyKey: "study-a",
        participantId: temp.participantId,
        key: "s1",
        arrivedAt: NOW_S - 50,
      });
      await t.database.db.insert(confidentialResponses).values({
        studyKey: "study-a",
        confidentialId: confidentialIdOf(study.secret, temp.participantId),
        key: "email",
        responses: [],
      });
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      const res = await postJson(
        t,
        events("study-a", "merge-temporary-participant"),
        { profileID: profile.id, temporaryParticipantID: temp.participantId },
        user.token,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        warnings: [],
        assignedSurveys: [
          { surveyKey: "intake", validFrom: 0, validUntil: 0, category: "prio", studyKey: "study-a", profileID: "" },
        ],
      });
      const targetId = participantIdOf(study, profile.id);
      const target = await readParticipant(t.database.db, "study-a", targetId);
      expect(target).toMatchObject({
        flags: { consent: "given" },
        lastSubmissions: { s1: NOW_S - 50 },
        studyStatus: "active",
      });
      expect(await readParticipant(t.database.db, "study-a", temp.participantId)).toBeUndefined();
      const [response] = await t.database.db.select().from(surveyResponses);
      expect(response?.participantId).toBe(targetId);
      const [confidential] = await t.database.db.select().from(confidentialResponses);
      expect(confidential?.confidentialId).toBe(confidentialIdOf(study.secret, targetId));
      const allReports = await t.database.db.select().from(reports);
      expect(allReports.map((r) => `${r.eventType}:${r.key}`).sort()).toEqual([
        "ENTER:entered",
        "ENTER:entered",
        "MERGE:merged",
      ]);
      expect(allReports.every((r) => r.participantId === targetId)).toBe(true);
    });

    it("404 unknown temp, 409 not temporary or too old, 403 foreign profile; failures are rate-limited (429)", async () => {
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      // An address of its own, so the failures counted here do not limit the other tests.
      const merge = (temporaryParticipantID: string) =>
        postJson(
          t,
          events("study-a", "merge-temporary-participant"),
          { profileID: profile.id, temporaryParticipantID },
          user.token,
          "POST",
          { "X-Forwarded-For": "203.0.113.7" },
        );
      expect((await merge("unknown")).status).toBe(404);
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "real", studyStatus: "active" });
      const notTemp = await merge("real");
      expect(notTemp.status).toBe(409);
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "old",
        studyStatus: "temporary",
        enteredAt: NOW_S - 86_401,
      });
      const old = await merge("old");
      expect(old.status).toBe(409);
      expect(await old.json()).toEqual({ error: "temporary participant is too old to be merged" });
      const stranger = await participantUser(t);
      const foreign = await postJson(
        t,
        events("study-a", "merge-temporary-participant"),
        { profileID: profile.id, temporaryParticipantID: "old" },
        stranger.token,
      );
      expect(foreign.status).toBe(403);
      expect(
        (await postJson(t, events("study-a", "merge-temporary-participant"), { profileID: profile.id }, user.token))
          .status,
      ).toBe(400);

      for (let attempt = 0; attempt < 7; attempt++) await merge(`guess-${attempt}`);
      const limited = await merge("guess-final");
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    });

    it("two simultaneous merges of one temporary participant: exactly one succeeds", async () => {
      const temp = await registerTemp();
      const a = await participantUser(t);
      const b = await participantUser(t);
      const results = await Promise.all(
        [a, b].map((u) =>
          postJson(
            t,
            events("study-a", "merge-temporary-participant"),
            { profileID: u.profiles[0]!.id, temporaryParticipantID: temp.participantId },
            u.token,
          ),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
      expect(await readParticipant(t.database.db, "study-a", temp.participantId)).toBeUndefined();
    });
  });

  it("a submit racing a leave leaves a consistent participant", async () => {
    const { token } = await researcher(t, "study-a", "edit-participant-data");
    for (let round = 0; round < 5; round++) {
      await t.database.sql`delete from participants`;
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      await postJson(t, events("study-a", "enter"), { profileID: profile.id }, user.token);
      const participantId = participantIdOf(study, profile.id);
      const [submit, leave] = await Promise.all([
        postJson(t, `/v1/studies/study-a/participants/${participantId}/responses`, { key: "weekly" }, token),
        postJson(t, events("study-a", "leave"), { profileID: profile.id }, user.token),
      ]);
      expect(leave.status).toBe(200);
      const row = await readParticipant(t.database.db, "study-a", participantId);
      expect(row?.studyStatus).toBe("exited");
      expect(row?.assignedSurveys).toEqual([]);
      // The submit either came first (its flag survived the leave) or after (it was still accepted for an exited participant).
      expect(submit.status).toBe(200);
      expect(row?.flags).toEqual({ submitted: "yes" });
      expect(row?.lastSubmissions).toHaveProperty("weekly");
      expect(row?.version).toBe(4);
    }
  });

  describe("bodies as CASE participant apps send them", () => {
    /** A fetch with a string body: text/plain, or no Content-Type at all. */
    const sendAsCaseApp = (what: string, body: unknown, token: string, contentType?: string) =>
      t.app.request(events("study-a", what), {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, ...(contentType ? { "Content-Type": contentType } : {}) },
        body: JSON.stringify(body),
      });

    it("enter, submit, custom, merge and leave take text/plain JSON with the app's own bodies and Go-style keys", async () => {
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      const text = "text/plain;charset=UTF-8";
      // the app's bodies carry studyKey too; case-backend's decoder matches keys whatever their case
      const enter = await sendAsCaseApp("enter", { studyKey: "study-a", profileId: profile.id }, user.token, text);
      expect(enter.status).toBe(200);
      expect(await enter.json()).toMatchObject({ created: true, assignedSurveys: [{ surveyKey: "intake" }] });

      const submit = await sendAsCaseApp(
        "submit",
        {
          studyKey: "study-a",
          ProfileID: profile.id,
          response: { key: "intake", submittedAt: NOW_S - 5, responses: [] },
        },
        user.token,
        text,
      );
      expect(submit.status).toBe(200);
      expect(await submit.json()).toEqual({
        assignedSurveys: [
          { surveyKey: "intake", validFrom: 0, validUntil: 0, category: "prio", studyKey: "study-a", profileID: "" },
        ],
        warnings: [],
      });
      expect(await t.database.db.select().from(surveyResponses)).toMatchObject([{ key: "intake" }]);

      const custom = await sendAsCaseApp(
        "custom",
        { studyKey: "study-a", profileid: profile.id, eventKey: "KIT", payload: { n: 1 } },
        user.token,
      );
      expect(custom.status).toBe(200);

      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "temp-text",
        studyStatus: "temporary",
        enteredAt: NOW_S - 10,
      });
      const merge = await sendAsCaseApp(
        "merge-temporary-participant",
        { profileID: profile.id, temporaryParticipantId: "temp-text" },
        user.token,
        text,
      );
      expect(merge.status).toBe(200);
      expect(await readParticipant(t.database.db, "study-a", "temp-text")).toBeUndefined();

      const leave = await sendAsCaseApp("leave", { studyKey: "study-a", profileID: profile.id }, user.token, text);
      expect(leave.status).toBe(200);
      expect(await leave.json()).toEqual({ assignedSurveys: [], warnings: [] });
      const row = await readParticipant(t.database.db, "study-a", participantIdOf(study, profile.id));
      expect(row).toMatchObject({ studyStatus: "exited", flags: { submitted: "yes" } });
    });

    it("a text/plain body that is not JSON, or names no profile, is a 400 naming the problem", async () => {
      const user = await participantUser(t);
      for (const what of ["enter", "submit", "custom", "leave", "merge-temporary-participant"]) {
        const notJson = await t.app.request(events("study-a", what), {
          method: "POST",
          headers: { Authorization: `Bearer ${user.token}`, "Content-Type": "text/plain" },
          body: "profileID=1",
        });
        expect(notJson.status, what).toBe(400);
        expect(await notJson.json()).toEqual({ error: "body: not valid JSON" });
        const noProfile = await sendAsCaseApp(what, { studyKey: "study-a" }, user.token, "text/plain");
        expect(noProfile.status, what).toBe(400);
        expect((await noProfile.json()).error).toMatch(/body\.profileID/);
      }
    });
  });
});
