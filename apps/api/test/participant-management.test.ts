import { permissions, surveyResponses, type CaseStudyAction } from "@studyflow/db";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  call,
  exp,
  insertParticipant,
  managementToken,
  onEvent,
  participantUser,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
  str,
  num,
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
  onEvent(
    "CUSTOM",
    call("UPDATE_FLAG", str("kit"), exp(call("getEventPayloadValueAsStr", str("kitType")))),
    call("INIT_REPORT", str("kit-report")),
  ),
];

const participantPath = (study: string, participant: string, rest = "") =>
  `/v1/studies/${study}/participants/${participant}${rest}`;

describe("participant management routes (CASE)", () => {
  let t: TestApp;
  let token: string;
  let admin: string;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    await setupStudy(t, { key: "study-a", rules });
    await setupStudy(t, { key: "study-b", rules });
    await setupStudy(t, { key: "study-off", status: "inactive", rules });
    ({ token } = await researcher(t, "study-a", "edit-participant-data"));
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

  describe("POST …/participants/{participantID}/events", () => {
    const path = (study: string, participant: string) => participantPath(study, participant, "/events");

    it("runs the CUSTOM rules with the event key and payload and saves the state and reports", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1", enteredAt: NOW_S - 100 });
      const res = await postJson(
        t,
        path("study-a", "p1"),
        { eventKey: "KIT_SENT", payload: { kitType: "saliva" } },
        token,
      );
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ message: "event submitted", result: [] });
      const saved = await readParticipant(t.database.db, "study-a", "p1");
      expect(saved?.flags).toEqual({ kit: "saliva" });
      const stored = await t.database.sql`select key, event_type from reports where participant_id = 'p1'`;
      expect(stored).toEqual([{ key: "kit-report", event_type: "CUSTOM" }]);
    });

    it("takes events for virtual participants; refuses a deleted account (409)", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "v1", studyStatus: "virtual" });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "d1",
        studyStatus: "accountDeleted",
      });
      expect(
        (await postJson(t, path("study-a", "v1"), { eventKey: "X", payload: { kitType: "a" } }, token)).status,
      ).toBe(200);
      const res = await postJson(t, path("study-a", "d1"), { eventKey: "X" }, token);
      expect(res.status).toBe(409);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    });

    it("400 for a missing or empty eventKey or a payload that is no object; 404 for an unknown participant", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      for (const body of [{}, { eventKey: "" }, { eventKey: "X", payload: [1] }, "not json"]) {
        const res = await postJson(t, path("study-a", "p1"), body, token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      const res = await postJson(t, path("study-a", "nobody"), { eventKey: "X" }, token);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'participant "nobody" not found in study "study-a"' });
      expect((await postJson(t, path("study-off", "p1"), { eventKey: "X" }, admin)).status).toBe(409);
    });

    it("401 without a token, 403 without edit-participant-data; another study's participant is not reachable", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-b", participantId: "pb" });
      expect((await postJson(t, path("study-a", "pb"), { eventKey: "X" })).status).toBe(401);
      const participant = await participantUser(t);
      expect((await postJson(t, path("study-a", "pb"), { eventKey: "X" }, participant.token)).status).toBe(401);
      const reader = await researcher(t, "study-a", "get-responses");
      expect((await postJson(t, path("study-a", "pb"), { eventKey: "X" }, reader.token)).status).toBe(403);
      expect((await postJson(t, path("study-b", "pb"), { eventKey: "X" }, token)).status).toBe(403);
      expect((await postJson(t, path("study-a", "pb"), { eventKey: "X" }, token)).status).toBe(404);
      expect((await readParticipant(t.database.db, "study-b", "pb"))?.flags).toEqual({});
    });
  });

  describe("POST …/participants/virtual", () => {
    const path = (study: string) => `/v1/studies/${study}/participants/virtual`;

    it("creates a participant with status virtual after the ENTER rules, audited", async () => {
      const creator = await caseResearcher(t, "study-a", "create-virtual-participant");
      const res = await postJson(t, path("study-a"), undefined, creator.token);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.message).toBe("virtual participant created");
      expect(body.participant).toMatchObject({ studyStatus: "virtual", enteredAt: NOW_S });
      expect(body.participant.assignedSurveys).toEqual([expect.objectContaining({ surveyKey: "intake" })]);
      const id = body.participant.participantId as string;
      expect(id).toMatch(/^[0-9a-f]{64}$/);
      expect((await readParticipant(t.database.db, "study-a", id))?.studyStatus).toBe("virtual");
      const audit = await t.database
        .sql`select actor, action, target from audit_log where action = 'participant.create-virtual'`;
      expect(audit).toEqual([{ actor: creator.subject, action: "participant.create-virtual", target: id }]);
      const second = await (await postJson(t, path("study-a"), undefined, creator.token)).json();
      expect(second.participant.participantId).not.toBe(id);
    });

    it("404 for an unknown study, 409 for an inactive one", async () => {
      expect((await postJson(t, path("nope"), undefined, admin)).status).toBe(404);
      const res = await postJson(t, path("study-off"), undefined, admin);
      expect(res.status).toBe(409);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    });

    it("401 without a token; 403 without create-virtual-participant or for another study", async () => {
      expect((await postJson(t, path("study-a"), undefined)).status).toBe(401);
      expect((await postJson(t, path("study-a"), undefined, token)).status).toBe(403);
      const other = await caseResearcher(t, "study-b", "create-virtual-participant");
      expect((await postJson(t, path("study-a"), undefined, other.token)).status).toBe(403);
      expect(await t.database.sql`select 1 from participants`).toHaveLength(0);
    });
  });

  describe("POST …/participants/{participantID}/remove-session", () => {
    const path = (study: string, participant: string) => participantPath(study, participant, "/remove-session");
    const respond = (participantId: string, session: string) =>
      t.database.db.insert(surveyResponses).values({
        studyKey: "study-a",
        participantId,
        key: "weekly",
        submittedAt: 1,
        arrivedAt: 1,
        context: { session },
      });

    it("replaces the current session and relabels the participant's responses under it", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1", currentStudySession: "s1" });
      await respond("p1", "s1");
      await respond("p1", "s1");
      await respond("p1", "s0");
      await respond("p2", "s1");
      const res = await postJson(t, path("study-a", "p1"), { sessionToRemove: "s1", replacementSession: "s2" }, token);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ message: "session removed", responsesUpdated: 2 });
      expect(body.participant.currentStudySession).toBe("s2");
      const sessions = await t.database
        .sql`select participant_id, context->>'session' as s from survey_responses order by participant_id, s`;
      expect(sessions.map((r) => `${r.participant_id}:${r.s}`)).toEqual(["p1:s0", "p1:s2", "p1:s2", "p2:s1"]);
    });

    it("without a replacement the session is emptied; another current session stays", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1", currentStudySession: "s9" });
      await respond("p1", "s1");
      const body = await (await postJson(t, path("study-a", "p1"), { sessionToRemove: "s1" }, token)).json();
      expect(body.responsesUpdated).toBe(1);
      expect(body.participant.currentStudySession).toBe("s9");
      const [row] = await t.database.sql`select context->>'session' as s from survey_responses`;
      expect(row!.s).toBe("");
    });

    it("400 without sessionToRemove, 404 for an unknown participant, 401/403 as the other routes", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-b", participantId: "pb", currentStudySession: "s1" });
      for (const body of [{}, { sessionToRemove: "" }, { sessionToRemove: 5 }]) {
        const res = await postJson(t, path("study-a", "p1"), body, token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      expect((await postJson(t, path("study-a", "pb"), { sessionToRemove: "s1" }, token)).status).toBe(404);
      expect((await postJson(t, path("study-b", "pb"), { sessionToRemove: "s1" }, token)).status).toBe(403);
      expect((await postJson(t, path("study-a", "pb"), { sessionToRemove: "s1" })).status).toBe(401);
      const reader = await researcher(t, "study-a", "get-responses");
      expect((await postJson(t, path("study-a", "pb"), { sessionToRemove: "s1" }, reader.token)).status).toBe(403);
      expect((await readParticipant(t.database.db, "study-b", "pb"))?.currentStudySession).toBe("s1");
    });
  });

  describe("POST …/participants/{participantID}/reports and PUT …/reports/{reportID}", () => {
    const path = (study: string, participant: string, rest = "") =>
      participantPath(study, participant, `/reports${rest}`);
    const report = (participantID: string) => ({
      key: "lab",
      participantID,
      timestamp: 1_700_000_000,
      data: [{ key: "result", value: "negative", dtype: "string" }],
    });

    it("stores a report, then appends to and replaces its data", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      const res = await postJson(t, path("study-a", "p1"), report("p1"), token);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({
        message: "report submitted",
        report: { key: "lab", participantID: "p1", timestamp: 1_700_000_000, responseID: "" },
      });
      const id = body.report.id as string;
      const [stored] = await t.database.sql`select event_type, data from reports where id = ${id}`;
      expect(stored).toEqual({
        event_type: "MANAGEMENT",
        data: [{ key: "result", value: "negative", dtype: "string" }],
      });

      const appended = await postJson(
        t,
        path("study-a", "p1", `/${id}`),
        { data: [{ key: "note", value: "x" }] },
        token,
        "PUT",
      );
      expect(appended.status).toBe(200);
      expect((await appended.json()).report.data).toEqual([
        { key: "result", value: "negative", dtype: "string" },
        { key: "note", value: "x" },
      ]);
      const replaced = await postJson(
        t,
        path("study-a", "p1", `/${id}`),
        { mode: "replace", data: [{ key: "only", value: "y" }] },
        token,
        "PUT",
      );
      expect((await replaced.json()).report.data).toEqual([{ key: "only", value: "y" }]);
    });

    it("a report without a timestamp gets the time it arrives", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      const body = await (await postJson(t, path("study-a", "p1"), { key: "lab", participantID: "p1" }, token)).json();
      expect(body.report.timestamp).toBe(NOW_S);
    });

    it("400 for another participantID, a deleted account, a bad body or mode; 404 for unknown participant or report", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p2" });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "gone",
        studyStatus: "accountDeleted",
      });
      for (const [participant, body] of [
        ["p1", report("p2")],
        ["gone", report("gone")],
        ["p1", { participantID: "p1" }],
        ["p1", { ...report("p1"), data: [{ key: "a", value: 1 }] }],
        ["p1", { ...report("p1"), timestamp: "soon" }],
      ] as const) {
        const res = await postJson(t, path("study-a", participant), body, token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      expect((await postJson(t, path("study-a", "nobody"), report("nobody"), token)).status).toBe(404);

      const id = (await (await postJson(t, path("study-a", "p1"), report("p1"), token)).json()).report.id as string;
      const bad = await postJson(t, path("study-a", "p1", `/${id}`), { mode: "merge", data: [] }, token, "PUT");
      expect(bad.status).toBe(400);
      for (const [participant, reportId] of [
        ["p2", id],
        ["p1", "not-a-uuid"],
        ["p1", "00000000-0000-4000-8000-000000000000"],
      ] as const) {
        const res = await postJson(t, path("study-a", participant, `/${reportId}`), { data: [] }, token, "PUT");
        expect(res.status, `${participant} ${reportId}`).toBe(404);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
    });

    it("401 without a token, 403 without edit-participant-data; another study's report is not reachable", async () => {
      await insertParticipant(t.database.db, { studyKey: "study-b", participantId: "pb" });
      const id = (await (await postJson(t, path("study-b", "pb"), report("pb"), admin)).json()).report.id as string;
      expect((await postJson(t, path("study-a", "pb"), report("pb"))).status).toBe(401);
      expect((await postJson(t, path("study-b", "pb"), report("pb"), token)).status).toBe(403);
      const reader = await researcher(t, "study-a", "get-reports");
      expect((await postJson(t, path("study-a", "pb"), report("pb"), reader.token)).status).toBe(403);
      expect((await postJson(t, path("study-b", "pb", `/${id}`), { data: [] }, token, "PUT")).status).toBe(403);
      expect(
        (await postJson(t, path("study-a", "pb", `/${id}`), { mode: "replace", data: [] }, token, "PUT")).status,
      ).toBe(404);
      const [kept] = await t.database.sql`select data from reports where id = ${id}`;
      expect(kept!.data).toHaveLength(1);
    });
  });

  describe("GET …/participants/{participantID}/responses", () => {
    const path = (study: string, participant: string, query = "") =>
      participantPath(study, participant, `/responses${query}`);
    const get = (p: string, auth?: string) =>
      t.app.request(p, { headers: auth ? { Authorization: `Bearer ${auth}` } : {} });
    const respond = (studyKey: string, participantId: string, key: string, arrivedAt: number) =>
      t.database.db.insert(surveyResponses).values({
        studyKey,
        participantId,
        key,
        versionId: "v1",
        submittedAt: arrivedAt,
        arrivedAt,
        responses: [{ key: `${key}.q1`, response: { key: "rg" } }],
        context: { session: "s1" },
      });

    it("pages every survey's responses of the participant, unflattened, in arrival order", async () => {
      const reader = await researcher(t, "study-a", "get-responses");
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      await respond("study-a", "p1", "weekly", 3);
      await respond("study-a", "p1", "intake", 1);
      await respond("study-a", "p1", "weekly", 2);
      await respond("study-a", "p2", "weekly", 4);
      const res = await get(path("study-a", "p1"), reader.token);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { responses: { arrivedAt: number }[]; pagination: unknown };
      expect(body.responses.map((r) => r.arrivedAt)).toEqual([1, 2, 3]);
      expect(body.responses[0]).toEqual({
        id: expect.any(String),
        key: "intake",
        participantId: "p1",
        versionId: "v1",
        openedAt: 0,
        submittedAt: 1,
        arrivedAt: 1,
        responses: [{ key: "intake.q1", response: { key: "rg" } }],
        context: { session: "s1" },
      });
      expect(body.pagination).toMatchObject({ totalCount: 3, currentPage: 1 });

      const filtered = await get(
        path(
          "study-a",
          "p1",
          `/?filter=${encodeURIComponent('{"key":"weekly","participantID":"p2"}')}&sort=${encodeURIComponent('{"arrivedAt":-1}')}&limit=1&page=2`,
        ),
        reader.token,
      );
      expect(filtered.status).toBe(200);
      const page = (await filtered.json()) as {
        responses: { arrivedAt: number; participantId: string }[];
        pagination: unknown;
      };
      expect(page.responses.map((r) => `${r.participantId}@${r.arrivedAt}`)).toEqual(["p1@2"]);
      expect(page.pagination).toMatchObject({ totalCount: 2, currentPage: 2 });
    });

    it("400 for a bad filter or sort, 404 for an unknown participant; 401/403; another study's participant is not reachable", async () => {
      const reader = await researcher(t, "study-a", "get-responses");
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
      await insertParticipant(t.database.db, { studyKey: "study-b", participantId: "pb" });
      await respond("study-b", "pb", "weekly", 1);
      for (const query of [
        "?filter=nojson",
        `?filter=${encodeURIComponent('{"nope":1}')}`,
        `?sort=${encodeURIComponent('{"x":1}')}`,
      ]) {
        const res = await get(path("study-a", "p1", query), reader.token);
        expect(res.status, query).toBe(400);
        expect(Object.keys(await res.json())).toEqual(["error"]);
      }
      const unknown = await get(path("study-a", "pb"), reader.token);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({ error: 'participant "pb" not found in study "study-a"' });
      expect((await get(path("study-a", "p1"))).status).toBe(401);
      expect((await get(path("study-a", "p1"), token)).status).toBe(403);
      expect((await get(path("study-b", "pb"), reader.token)).status).toBe(403);
    });
  });
});
