import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { permissions, reports, surveyResponses, type CaseStudyAction } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
  insertParticipant,
  managementToken,
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

/** A researcher holding one of case-backend's own study actions (case-admin grants them by these names). */
async function caseResearcher(t: TestApp, studyKey: string, action: CaseStudyAction) {
  const subject = `researcher-${Math.random().toString(36).slice(2, 10)}`;
  await t.database.db.insert(permissions).values({ subjectId: subject, studyKey, action });
  await t.settle();
  return { subject, token: await managementToken(t, subject) };
}

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;

const rules = [
  onEvent("ENTER", call("ADD_NEW_SURVEY", str("intake"), num(0), num(0), str("normal"))),
  onEvent("CUSTOM", call("SET_LINKING_CODE", str("panel"), exp(call("getEventPayloadValueAsStr", str("code"))))),
  onEvent("MERGE", call("UPDATE_FLAG", str("merged"), str("yes"))),
];

const mergeVirtual = (study: string) => `/v1/study-service/events/${study}/merge-virtual-participant`;
const lookup = (study: string, key?: string, value?: string) =>
  `/v1/study-service/virtual-participants/${study}/?${new URLSearchParams({
    ...(key === undefined ? {} : { key }),
    ...(value === undefined ? {} : { value }),
  }).toString()}`;
const forceMerge = (study: string) => `/v1/studies/${study}/participants/merge`;

describe("virtual participants: claimed by a profile, looked up, merged by researchers", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let admin: string;

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-a", rules });
    await setupStudy(t, { key: "study-b", rules });
    await setupStudy(t, { key: "study-off", status: "inactive", rules });
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    t.setNow(NOW);
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from reports`;
  });

  describe("POST /v1/study-service/events/{studyKey}/merge-virtual-participant", () => {
    it("a researcher's virtual participant, with a response and a report, is claimed by a new profile", async () => {
      const created = await (await postJson(t, "/v1/studies/study-a/participants/virtual", undefined, admin)).json();
      const virtualId = created.participant.participantId as string;
      const event = await postJson(
        t,
        `/v1/studies/study-a/participants/${virtualId}/events`,
        { eventKey: "LINK", payload: { code: "PANEL-7" } },
        admin,
      );
      expect(event.status).toBe(200);
      const submitted = await postJson(
        t,
        `/v1/studies/study-a/participants/${virtualId}/responses`,
        { key: "intake", responses: [] },
        admin,
      );
      expect(submitted.status).toBe(200);
      await postJson(
        t,
        `/v1/studies/study-a/participants/${virtualId}/reports`,
        { key: "lab", participantID: virtualId },
        admin,
      );

      const user = await participantUser(t);
      const profileID = user.profiles[0]!.id;
      const res = await postJson(
        t,
        mergeVirtual("study-a"),
        { profileID, virtualParticipantID: virtualId, linkingCodeKey: "panel", linkingCodeValue: "PANEL-7" },
        user.token,
      );
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.assignedSurveys).toEqual([expect.objectContaining({ surveyKey: "intake" })]);

      const own = participantIdOf(study, profileID);
      const merged = await readParticipant(t.database.db, "study-a", own);
      expect(merged).toMatchObject({ studyStatus: "active", flags: { merged: "yes" } });
      expect(merged!.lastSubmissions).toEqual({ intake: NOW_S });
      expect(await readParticipant(t.database.db, "study-a", virtualId)).toBeUndefined();
      const responses = await t.database.db.select().from(surveyResponses);
      expect(responses.map((r) => r.participantId)).toEqual([own]);
      const moved = await t.database.db.select().from(reports);
      expect(new Set(moved.map((r) => r.participantId))).toEqual(new Set([own]));
    });

    it("an unknown id, a participant that is not virtual and a wrong code all answer the same 404", async () => {
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "v1",
        studyStatus: "virtual",
        linkingCodes: { panel: "P1" },
      });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "a1",
        linkingCodes: { panel: "P1" },
      });
      await insertParticipant(t.database.db, {
        studyKey: "study-b",
        participantId: "vb",
        studyStatus: "virtual",
        linkingCodes: { panel: "P1" },
      });
      const user = await participantUser(t);
      const profileID = user.profiles[0]!.id;
      const bodies = [
        { virtualParticipantID: "nobody", linkingCodeKey: "panel", linkingCodeValue: "P1" },
        { virtualParticipantID: "a1", linkingCodeKey: "panel", linkingCodeValue: "P1" },
        { virtualParticipantID: "v1", linkingCodeKey: "panel", linkingCodeValue: "P2" },
        { virtualParticipantID: "v1", linkingCodeKey: "other", linkingCodeValue: "P1" },
        { virtualParticipantID: "vb", linkingCodeKey: "panel", linkingCodeValue: "P1" },
      ];
      for (const body of bodies) {
        const res = await postJson(t, mergeVirtual("study-a"), { profileID, ...body }, user.token);
        expect(res.status, JSON.stringify(body)).toBe(404);
        expect(await res.json()).toEqual({
          error: "virtual participant not found, or it does not hold this linking code",
        });
      }
      expect((await readParticipant(t.database.db, "study-a", "v1"))?.studyStatus).toBe("virtual");
      expect(await readParticipant(t.database.db, "study-a", participantIdOf(study, profileID))).toBeUndefined();
    });

    it("400 for a missing field, 401 without a token, 403 for another user's profile, 409 for an inactive study", async () => {
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "v1",
        studyStatus: "virtual",
        linkingCodes: { panel: "P1" },
      });
      const user = await participantUser(t);
      const other = await participantUser(t);
      const full = {
        profileID: user.profiles[0]!.id,
        virtualParticipantID: "v1",
        linkingCodeKey: "panel",
        linkingCodeValue: "P1",
      };
      for (const field of ["virtualParticipantID", "linkingCodeKey", "linkingCodeValue", "profileID"] as const) {
        const res = await postJson(t, mergeVirtual("study-a"), { ...full, [field]: "" }, user.token);
        expect(res.status, field).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      expect((await postJson(t, mergeVirtual("study-a"), full)).status).toBe(401);
      expect((await postJson(t, mergeVirtual("study-a"), full, admin)).status).toBe(401);
      expect((await postJson(t, mergeVirtual("study-a"), full, other.token)).status).toBe(403);
      expect((await postJson(t, mergeVirtual("study-off"), full, user.token)).status).toBe(409);
      expect((await readParticipant(t.database.db, "study-a", "v1"))?.studyStatus).toBe("virtual");
    });

    it("turns a caller away after 10 failed claims", async () => {
      // an app of its own: the failures of the tests before count against the same address
      const fresh = await createTestApp();
      try {
        const user = await participantUser(fresh);
        const body = {
          profileID: user.profiles[0]!.id,
          virtualParticipantID: "nobody",
          linkingCodeKey: "panel",
          linkingCodeValue: "x",
        };
        for (let i = 0; i < 10; i++) {
          expect((await postJson(fresh, mergeVirtual("study-a"), body, user.token)).status).toBe(404);
        }
        const res = await postJson(fresh, mergeVirtual("study-a"), body, user.token);
        expect(res.status).toBe(429);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      } finally {
        await fresh.close();
      }
    });
  });

  describe("GET /v1/study-service/virtual-participants/{studyKey}/", () => {
    it("lists the virtual participants holding the linking code, with or without the trailing slash", async () => {
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "v1",
        studyStatus: "virtual",
        linkingCodes: { panel: "P1" },
      });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "a1",
        linkingCodes: { panel: "P1" },
      });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "v2",
        studyStatus: "virtual",
        linkingCodes: { panel: "P2" },
      });
      const user = await participantUser(t);
      const res = await get(lookup("study-a", "panel", "P1"), user.token);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { participants: { participantId: string; studyStatus: string }[] };
      expect(body.participants.map((p) => p.participantId)).toEqual(["v1"]);
      expect(body.participants[0]!.studyStatus).toBe("virtual");
      const noSlash = await get(lookup("study-a", "panel", "P9").replace("/?", "?"), user.token);
      expect(noSlash.status).toBe(200);
      expect(await noSlash.json()).toEqual({ participants: [] });
    });

    it("400 without key or value, 404 for an unknown study, 401 without a participant token", async () => {
      const user = await participantUser(t);
      for (const path of [lookup("study-a", "panel"), lookup("study-a", undefined, "P1"), lookup("study-a", "", "")]) {
        const res = await get(path, user.token);
        expect(res.status, path).toBe(400);
        expect(await res.json()).toEqual({ error: "missing required fields" });
      }
      expect((await get(lookup("nope", "panel", "P1"), user.token)).status).toBe(404);
      expect((await get(lookup("study-a", "panel", "P1"))).status).toBe(401);
      expect((await get(lookup("study-a", "panel", "P1"), admin)).status).toBe(401);
    });
  });

  describe("POST /v1/studies/{studyKey}/participants/merge", () => {
    it("merges one participant into another: MERGE rules, submissions, responses, reports; audited", async () => {
      const merger = await caseResearcher(t, "study-a", "merge-participants");
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "target",
        lastSubmissions: { weekly: 10, intake: 5 },
      });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "with",
        studyStatus: "virtual",
        lastSubmissions: { weekly: 20 },
      });
      await t.database.db.insert(surveyResponses).values({
        studyKey: "study-a",
        participantId: "with",
        key: "weekly",
        submittedAt: 20,
        arrivedAt: 20,
      });
      const res = await postJson(
        t,
        forceMerge("study-a"),
        { targetParticipantID: "target", withParticipantID: "with" },
        merger.token,
      );
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.participant).toMatchObject({
        participantId: "target",
        flags: { merged: "yes" },
        lastSubmissions: { weekly: 20, intake: 5 },
      });
      expect(await readParticipant(t.database.db, "study-a", "with")).toBeUndefined();
      const [moved] = await t.database.db.select().from(surveyResponses);
      expect(moved!.participantId).toBe("target");
      const audit = await t.database
        .sql`select actor, target, details from audit_log where action = 'participants.merge'`;
      expect(audit).toEqual([{ actor: merger.subject, target: "target", details: { merged: "with" } }]);
    });

    it("400 for the same participant twice or a missing id, 404 for an unknown one; 401/403; other studies unreachable", async () => {
      const merger = await caseResearcher(t, "study-a", "merge-participants");
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      await insertParticipant(t.database.db, { studyKey: "study-b", participantId: "pb" });
      for (const body of [
        { targetParticipantID: "p1", withParticipantID: "p1" },
        { targetParticipantID: "p1" },
        { targetParticipantID: "", withParticipantID: "x" },
      ]) {
        const res = await postJson(t, forceMerge("study-a"), body, merger.token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      const unknown = await postJson(
        t,
        forceMerge("study-a"),
        { targetParticipantID: "p1", withParticipantID: "pb" },
        merger.token,
      );
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({ error: 'participant "pb" not found in study "study-a"' });
      const both = { targetParticipantID: "pb", withParticipantID: "p1" };
      expect((await postJson(t, forceMerge("study-a"), both)).status).toBe(401);
      const editor = await researcher(t, "study-a", "edit-participant-data");
      expect((await postJson(t, forceMerge("study-a"), both, editor.token)).status).toBe(403);
      expect((await postJson(t, forceMerge("study-b"), both, merger.token)).status).toBe(403);
      expect(await readParticipant(t.database.db, "study-a", "p1")).toBeDefined();
      expect(await readParticipant(t.database.db, "study-b", "pb")).toBeDefined();
    });
  });
});
