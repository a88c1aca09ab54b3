import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "@studyflow/db";
import { grantPermission } from "@studyflow/domain/study-setup";
import { startTcpProxy, adminDatabaseUrl, type TcpProxy } from "@studyflow/testkit";
import {
  call,
  exp,
  insertParticipant,
  managementToken,
  num,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * Round trips to PostgreSQL per participant event, counted at the wire by a proxy in front of the
 * database (one pooled connection, warmed: its statements are prepared and the caches filled).
 * A submit is two: the lock of participant and study goes with the BEGIN (the driver's patch), and
 * the update and the response insert go with the COMMIT (EventContext.sendWithCommit).
 */
describe("round trips of a participant event", () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let token: string;
  const STUDY = "trips";
  // one IFTHEN per event type, one per survey inside SUBMIT, as case-editor-tools writes them
  const rules = [
    onEvent(
      "SUBMIT",
      call(
        "IFTHEN",
        exp(call("checkSurveyResponseKey", str("weekly"))),
        exp(call("REMOVE_SURVEYS_BY_KEY", str("weekly"))),
        exp(call("ADD_NEW_SURVEY", str("weekly"), exp(call("timestampWithOffset", num(0))), num(0), str("normal"))),
      ),
    ),
    onEvent(
      "SUBMIT",
      call(
        "IFTHEN",
        exp(call("checkSurveyResponseKey", str("symptoms"))),
        exp(call("INIT_REPORT", str("symptomsReport"))),
        exp(call("UPDATE_REPORT_DATA", str("symptomsReport"), str("reported"), str("yes"))),
      ),
    ),
    onEvent("LEAVE", call("REMOVE_SURVEYS_BY_KEY", str("weekly"))),
    onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes"))),
  ];

  beforeAll(async () => {
    // the app under test reaches its database through the counting proxy, on one connection
    const server = new URL(adminDatabaseUrl);
    proxy = await startTcpProxy(server.hostname, Number(server.port || 5432));
    t = await createTestApp({
      databaseThrough: (databaseUrl) => {
        const url = new URL(databaseUrl);
        url.hostname = "127.0.0.1";
        url.port = String(proxy.port);
        return createDb(url.toString(), { max: 1 });
      },
    });
    await setupStudy(t, { key: STUDY, rules });
    await grantPermission(t.database.db, "trips-researcher", STUDY, "edit-participant-data");
    token = await managementToken(t, "trips-researcher");
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  /** Round trips of `request`, after two warm-up runs of it. */
  async function roundTripsOf(request: () => Promise<Response>) {
    for (let warm = 0; warm < 2; warm++) expect((await request()).status).toBe(200);
    proxy.takeRoundTrips();
    expect((await request()).status).toBe(200);
    return proxy.takeRoundTrips();
  }

  /** A researcher's submit of an empty response to `surveyKey` on behalf of `participantId`. */
  const submitFor = (participantId: string, surveyKey: string) => () =>
    postJson(
      t,
      `/v1/studies/${STUDY}/participants/${participantId}/responses`,
      { key: surveyKey, responses: [] },
      token,
    );

  it("a submit on behalf of a participant: 2", async () => {
    const participant = await insertParticipant(t.database.db, { studyKey: STUDY, participantId: "p-trips" });
    expect(await roundTripsOf(submitFor(participant.participantId, "weekly"))).toBe(2);
  });

  it("a submit whose rules write a report: 2, the report sent with the COMMIT too", async () => {
    const participant = await insertParticipant(t.database.db, { studyKey: STUDY, participantId: "p-reports" });
    expect(await roundTripsOf(submitFor(participant.participantId, "symptoms"))).toBe(2);
    const stored = await t.database.sql<{ key: string; data: unknown; linked: boolean }[]>`
      select r.key, r.data, r.response_id = s.id as linked
      from reports r join survey_responses s on s.id = r.response_id
      where r.study_key = ${STUDY} and r.participant_id = ${participant.participantId}`;
    // one report per submit, three submits, each linked to its response
    expect(stored).toHaveLength(3);
    expect(stored[0]).toEqual({
      key: "symptomsReport",
      data: [{ key: "reported", value: "yes" }],
      linked: true,
    });
  });

  it("a participant's own submit: 2; leave: 2 (its confidential responses go too); enter again: 2", async () => {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    const [study] = await t.database.sql<{ secret: string }[]>`select secret from studies where key = ${STUDY}`;
    await insertParticipant(t.database.db, { studyKey: STUDY, participantId: participantIdOf(study!, profileID) });
    const events = (event: string, body: object) => () =>
      postJson(t, `/v1/study-service/events/${STUDY}/${event}`, { profileID, ...body }, user.token);
    expect(await roundTripsOf(events("submit", { response: { key: "weekly", responses: [] } }))).toBe(2);

    const leave = events("leave", {});
    const enter = events("enter", {});
    for (let warm = 0; warm < 2; warm++) {
      expect((await leave()).status).toBe(200);
      expect((await enter()).status).toBe(200);
    }
    proxy.takeRoundTrips();
    expect((await leave()).status).toBe(200);
    expect(proxy.takeRoundTrips()).toBe(2);
    expect((await enter()).status).toBe(200);
    // the lock of the participant who left with the BEGIN, its update with the COMMIT
    expect(proxy.takeRoundTrips()).toBe(2);
  });
});
