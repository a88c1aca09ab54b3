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
});
