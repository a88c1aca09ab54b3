import { SignJWT } from "jose";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialResponses, reports, ruleFailures, studyCounters, surveyResponses } from "@studyflow/db";
import { revokeSubjectTokens, mintManagementToken, mintParticipantToken } from "@studyflow/domain/access";
import {
  call,
  exp,
  insertParticipant,
  managementToken,
  num,
  onEvent,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;

const submitRules = [
  onEvent(
    "SUBMIT",
    call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
    call("UPDATE_FLAG", str("intakeDone"), str("yes")),
    call("INIT_REPORT", str("intake-report")),
    call(
      "UPDATE_REPORT_DATA",
      str("intake-report"),
      str("answer"),
      exp(call("getResponseValueAsStr", str("q1"), str("q1"))),
    ),
  ),
];

const path = (study: string, participant: string) => `/v1/studies/${study}/participants/${participant}/responses`;
const response = { key: "intake", responses: [{ key: "q1", response: { key: "q1", value: "42" } }] };

describe("POST /v1/studies/{studyKey}/participants/{participantID}/responses", () => {
  let t: TestApp;
  let token: string;
  let subject: string;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    await setupStudy(t, { key: "study-a", rules: submitRules });
    await setupStudy(t, { key: "study-plain" });
    await setupStudy(t, { key: "study-off", status: "inactive" });
    ({ token, subject } = await researcher(t, "study-a", "edit-participant-data"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from reports`;
  });

  it("runs the SUBMIT rules and stores response, reports and state together", async () => {
    await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1", enteredAt: NOW_S - 100 });
    const res = await postJson(t, path("study-a", "p1"), { ...response, id: "client-chosen", arrivedAt: 1 }, token);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.message).toBe("response submitted");
    expect(body.result).toEqual([
      { surveyKey: "weekly", validFrom: 0, validUntil: 0, category: "normal", studyKey: "study-a", profileID: "" },
    ]);
    expect(body.participant).toMatchObject({
      participantId: "p1",
      flags: { intakeDone: "yes" },
      lastSubmissions: { intake: NOW_S },
      modifiedAt: NOW_S,
      studyStatus: "active",
    });

    const [stored] = await t.database.db.select().from(surveyResponses);
    expect(stored).toMatchObject({ key: "intake", participantId: "p1", arrivedAt: NOW_S });
    expect(stored!.id).not.toBe("client-chosen");
    expect(stored!.context).toMatchObject({ submittedBy: subject });
    const storedReports = await t.database.db.select().from(reports);
    expect(storedReports).toHaveLength(1);
    expect(storedReports[0]).toMatchObject({
      key: "intake-report",
      responseId: stored!.id,
      eventType: "SUBMIT",
      data: [{ key: "answer", value: "42" }],
    });
    const saved = await readParticipant(t.database.db, "study-a", "p1");
    expect(saved?.version).toBe(2);
  });

  it("stores confidential items apart, without meta, under the confidential id", async () => {
    await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
    const res = await postJson(
      t,
      path("study-a", "p1"),
      {
        key: "intake",
        responses: [
          { key: "q1", response: { key: "q1", value: "1" } },
          {
            key: "secret",
            meta: { position: 1 },
            confidentialMode: "replace",
            mapToKey: "email",
            response: { key: "e", value: "x@y.z" },
          },
        ],
      },
      token,
    );
    expect(res.status).toBe(200);
    const [stored] = await t.database.db.select().from(surveyResponses);
    expect(stored!.responses).toEqual([{ key: "q1", response: { key: "q1", value: "1" } }]);
    const confidential = await t.database.db.select().from(confidentialResponses);
    expect(confidential).toHaveLength(1);
    expect(confidential[0]!.key).toBe("email");
    expect(confidential[0]!.confidentialId).not.toBe("p1");
    expect(confidential[0]!.responses).toEqual([
      { key: "secret", confidentialMode: "replace", mapToKey: "email", response: { key: "e", value: "x@y.z" } },
    ]);
  });

  it("stores the response of a study without rules and leaves the state as it was", async () => {
    const admin = await managementToken(t, "root", true);
    await insertParticipant(t.database.db, { studyKey: "study-plain", participantId: "p9", flags: { a: "b" } });
    const res = await postJson(t, path("study-plain", "p9"), response, admin);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.result).toEqual([]);
    expect(body.participant.flags).toEqual({ a: "b" });
    expect(await t.database.db.select().from(surveyResponses)).toHaveLength(1);
  });

  const brokenRules = [
    onEvent("SUBMIT", call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("ids"), str("studyId"))),
    call("UPDATE_FLAG", str("x"), exp(call("getResponseValueAsNum", str("missing"), str("missing")))),
    onEvent("SUBMIT", call("UPDATE_FLAG", str("after"), str("ran"))),
  ];

  it("a failing rule is skipped: the response and the other rules' changes are kept, the failure reported", async () => {
    await setupStudy(t, { key: "study-lenient", rules: brokenRules });
    const admin = await managementToken(t, "root", true);
    await insertParticipant(t.database.db, { studyKey: "study-lenient", participantId: "p1" });
    const res = await postJson(t, path("study-lenient", "p1"), response, admin);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.participant.flags).toEqual({ studyId: "1", after: "ran" });
    expect(body.warnings).toEqual([
      {
        eventType: "SUBMIT",
        ruleIndex: 1,
        path: "rules[1].data[1].exp",
        message: expect.stringMatching(/^UPDATE_FLAG: /),
        outcome: "rule-skipped",
      },
    ]);
    expect(
      await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.studyKey, "study-lenient")),
    ).toHaveLength(1);
    const [failure] = await t.database.db.select().from(ruleFailures).where(eq(ruleFailures.studyKey, "study-lenient"));
    expect(failure).toMatchObject({
      participantId: "p1",
      eventType: "SUBMIT",
      eventKey: response.key,
      rulesVersion: 1,
      ruleIndex: 1,
      path: "rules[1].data[1].exp",
      outcome: "rule-skipped",
    });
  });

  it("a strict study rejects the event (422): participant, responses and counters stay as they were; the failure is recorded", async () => {
    await setupStudy(t, {
      key: "study-broken",
      settings: { strictRules: true },
      rules: [
        onEvent("SUBMIT", call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("ids"), str("studyId"))),
        onEvent(
          "SUBMIT",
          call("UPDATE_FLAG", str("x"), exp(call("getResponseValueAsNum", str("missing"), str("missing")))),
        ),
      ],
    });
    const admin = await managementToken(t, "root", true);
    await insertParticipant(t.database.db, { studyKey: "study-broken", participantId: "p1" });
    const before = await readParticipant(t.database.db, "study-broken", "p1");
    const res = await postJson(t, path("study-broken", "p1"), response, admin);
    expect(res.status).toBe(422);
    expect((await res.json()).error).toMatch(
      /study rules failed on SUBMIT \(rule 1 at rules\[1\]\.data\[1\]\.exp\.data\[1\]\.exp\)/,
    );
    expect(await readParticipant(t.database.db, "study-broken", "p1")).toEqual(before);
    expect(await t.database.db.select().from(surveyResponses)).toHaveLength(0);
    expect(await t.database.db.select().from(studyCounters).where(eq(studyCounters.studyKey, "study-broken"))).toEqual(
      [],
    );
    const failures = await t.database.db.select().from(ruleFailures).where(eq(ruleFailures.studyKey, "study-broken"));
    expect(failures).toMatchObject([{ participantId: "p1", ruleIndex: 1, outcome: "event-rejected" }]);
  });

  describe("bad input", () => {
    beforeEach(async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
    });

    it.each([
      ["a missing key", { responses: [] }, /body\.key/],
      ["an empty key", { key: "" }, /key must not be empty/],
      ["a non-string key", { key: 5 }, /body\.key/],
      ["responses that are not an array", { key: "k", responses: "nope" }, /body\.responses/],
      ["a non-integer timestamp", { key: "k", submittedAt: "yesterday" }, /body\.submittedAt/],
    ])("rejects %s with 400 and changes nothing", async (_, body, message) => {
      const res = await postJson(t, path("study-a", "p1"), body, token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(message);
      expect(await t.database.db.select().from(surveyResponses)).toHaveLength(0);
    });

    it("rejects malformed JSON with 400", async () => {
      const res = await postJson(t, path("study-a", "p1"), "{not json", token);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    });

    it("404 for an unknown participant or study, 409 for an inactive study or a deleted account", async () => {
      const admin = await managementToken(t, "root", true);
      expect((await postJson(t, path("study-a", "nobody"), response, token)).status).toBe(404);
      expect((await postJson(t, path("no-study", "p1"), response, admin)).status).toBe(404);
      await insertParticipant(t.database.db, { studyKey: "study-off", participantId: "p1" });
      const inactive = await postJson(t, path("study-off", "p1"), response, admin);
      expect(inactive.status).toBe(409);
      expect(await inactive.json()).toEqual({ error: 'study "study-off" is not active' });
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "gone",
        studyStatus: "accountDeleted",
      });
      expect((await postJson(t, path("study-a", "gone"), response, token)).status).toBe(409);
    });
  });

  describe("security", () => {
    beforeEach(async () => {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
    });

    it("401 without a token, with a malformed one, an expired one, or a foreign signature", async () => {
      expect((await postJson(t, path("study-a", "p1"), response)).status).toBe(401);
      expect((await postJson(t, path("study-a", "p1"), response, "not-a-jwt")).status).toBe(401);
      const expired = await mintManagementToken({
        subject: "x",
        isAdmin: true,
        secret: t.config.MANAGEMENT_JWT_SECRET,
        now: NOW - 7_200_000,
        ttlSeconds: 60,
      });
      const res = await postJson(t, path("study-a", "p1"), response, expired);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "token expired" });
      const foreign = await mintManagementToken({
        now: Date.now(),
        subject: "x",
        isAdmin: true,
        secret: "another-secret-that-is-long-enough-000",
      });
      expect((await postJson(t, path("study-a", "p1"), response, foreign)).status).toBe(401);
    });

    it("401 for a participant token, and for an algorithm other than the pinned one", async () => {
      const participantToken = await mintParticipantToken({
        now: Date.now(),
        userId: "00000000-0000-4000-8000-000000000000",
        tokenVersion: 0,
        secret: t.config.MANAGEMENT_JWT_SECRET,
      });
      const res = await postJson(t, path("study-a", "p1"), response, participantToken);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "not a management token" });
      const hs512 = await new SignJWT({ typ: "management", admin: true })
        .setProtectedHeader({ alg: "HS512" })
        .setSubject("x")
        .setIssuer("studyflow")
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode(t.config.MANAGEMENT_JWT_SECRET));
      expect((await postJson(t, path("study-a", "p1"), response, hs512)).status).toBe(401);
      const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(
        JSON.stringify({ typ: "management", admin: true, sub: "x", iss: "studyflow" }),
      ).toString("base64url")}.`;
      expect((await postJson(t, path("study-a", "p1"), response, unsigned)).status).toBe(401);
    });

    it("403 without the permission, or with it only for another study", async () => {
      const stranger = await managementToken(t, "stranger");
      const res = await postJson(t, path("study-a", "p1"), response, stranger);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'missing permission "edit-participant-data" for study "study-a"' });
      const other = await researcher(t, "study-plain", "edit-participant-data");
      expect((await postJson(t, path("study-a", "p1"), response, other.token)).status).toBe(403);
      const wrongAction = await researcher(t, "study-a", "run-study-action");
      expect((await postJson(t, path("study-a", "p1"), response, wrongAction.token)).status).toBe(403);
      expect(await t.database.db.select().from(surveyResponses)).toHaveLength(0);
    });

    it("a wildcard permission covers every study", async () => {
      const wildcard = await researcher(t, "*", "edit-participant-data");
      expect((await postJson(t, path("study-a", "p1"), response, wildcard.token)).status).toBe(200);
    });
  });
});

describe("revoked management tokens", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-r" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("a token issued before its subject's revocation is refused; one issued after works", async () => {
    const put = (token: string) =>
      postJson(t, "/v1/studies/study-r/track-account", { trackAccount: true }, token, "PUT");
    const issuedAt = Date.UTC(2026, 0, 1, 12, 0, 0);
    t.setNow(issuedAt + 5_000);
    const old = await mintManagementToken({
      subject: "ana",
      isAdmin: true,
      secret: t.config.MANAGEMENT_JWT_SECRET,
      now: issuedAt,
    });
    expect((await put(old)).status).toBe(200);
    await revokeSubjectTokens(t.database.db, "ana", new Date(issuedAt + 1_000));
    const refused = await put(old);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: "token revoked: request a new one" });
    const fresh = await mintManagementToken({
      subject: "ana",
      isAdmin: true,
      secret: t.config.MANAGEMENT_JWT_SECRET,
      now: issuedAt + 2_000,
    });
    expect((await put(fresh)).status).toBe(200);
    const other = await mintManagementToken({
      subject: "bo",
      isAdmin: true,
      secret: t.config.MANAGEMENT_JWT_SECRET,
      now: issuedAt,
    });
    expect((await put(other)).status).toBe(200);
  });
});
