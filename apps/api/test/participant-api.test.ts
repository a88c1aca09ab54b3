import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { participants, ruleFailures, studies, surveyResponses } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
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
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const DAY = 86_400;

const when = (...conditions: ReturnType<typeof call>[]) =>
  conditions.length === 1 ? exp(conditions[0]!) : exp(call("and", ...conditions.map(exp)));
const ifThen = (condition: ReturnType<typeof exp>, ...actions: ReturnType<typeof call>[]) =>
  call("IFTHEN", condition, ...actions.map(exp));
const onSubmitOf = (surveyKey: string, ...actions: ReturnType<typeof call>[]) =>
  ifThen(when(call("checkEventType", str("SUBMIT")), call("checkSurveyResponseKey", str(surveyKey))), ...actions);

/**
 * A study shaped like a real CASE study: entering assigns the intake for 30 days; submitting it
 * records the age group and assigns the weekly survey; each weekly submission schedules the next
 * one a week later; the KIT_ORDERED custom event records the kit type and assigns its feedback.
 */
const fluRules = [
  onEvent(
    "ENTER",
    call("ADD_NEW_SURVEY", str("intake"), num(0), exp(call("timestampWithOffset", num(30 * DAY))), str("prio")),
    call("SET_LINKING_CODE", str("panel"), str("PANEL-123")),
  ),
  onSubmitOf(
    "intake",
    call("REMOVE_SURVEYS_BY_KEY", str("intake")),
    call("UPDATE_FLAG", str("intakeDone"), str("yes")),
    call("UPDATE_FLAG", str("ageGroup"), exp(call("getSelectedKeys", str("intake.Q1"), str("rg.scg")))),
    call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
  ),
  onSubmitOf(
    "weekly",
    call("REMOVE_SURVEYS_BY_KEY", str("weekly")),
    call("ADD_NEW_SURVEY", str("weekly"), exp(call("timestampWithOffset", num(7 * DAY))), num(0), str("normal")),
  ),
  ifThen(
    when(call("checkEventType", str("CUSTOM")), call("checkEventKey", str("KIT_ORDERED"))),
    call("UPDATE_FLAG", str("kitType"), exp(call("getEventPayloadValueAsStr", str("kitType")))),
    call("ADD_NEW_SURVEY", str("kitFeedback"), num(0), num(0), str("normal")),
  ),
];

const events = (study: string, what: string) => `/v1/study-service/events/${study}/${what}`;
const views = (path: string, profileId: string) =>
  `/v1/study-service/participant/${path}${path.includes("?") ? "&" : "?"}profileID=${encodeURIComponent(profileId)}`;

describe("participant API", () => {
  let t: TestApp;
  let flu: Awaited<ReturnType<typeof setupStudy>>;
  let rejecting: Awaited<ReturnType<typeof setupStudy>>;
  let surveyToken: string;
  let versions: { intake: string; weekly: string };

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  /** A user with a profile that has entered the flu study (intake assigned). */
  async function enrolled(studyKey = "flu") {
    const user = await participantUser(t, ["main", "child"]);
    const profile = user.profiles[0]!;
    const res = await postJson(t, events(studyKey, "enter"), { profileID: profile.id }, user.token);
    expect(res.status).toBe(200);
    return { user, profile, token: user.token };
  }

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    flu = await setupStudy(t, { key: "flu", rules: fluRules });
    rejecting = await setupStudy(t, { key: "flu-strict-versions", rules: fluRules });
    await setupStudy(t, { key: "mixed", rules: fluRules });
    await setupStudy(t, { key: "covid", rules: fluRules });
    await setupStudy(t, { key: "closed", rules: fluRules, status: "inactive" });
    await t.database.db
      .update(studies)
      .set({ config: sql`${studies.config} || '{"unknownSurveyVersion":"reject"}'::jsonb` })
      .where(eq(studies.key, "flu-strict-versions"));
    await t.database.db
      .update(studies)
      .set({
        props: {
          name: { en: "Flu watch", de: "Grippe-Radar" },
          description: { en: "Weekly symptoms" },
          tags: ["influenza"],
          startDate: "2026-05-01",
        },
      })
      .where(eq(studies.key, "flu"));
    await t.settle();
    ({ token: surveyToken } = await researcher(t, "*", "manage-surveys"));
    versions = {
      intake: await uploadSurvey(t, "flu", surveyToken, caseSurvey("intake")),
      weekly: await uploadSurvey(t, "flu", surveyToken, caseSurvey("weekly")),
    };
    await uploadSurvey(t, "flu-strict-versions", surveyToken, caseSurvey("intake"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.setNow(NOW);
  });

  describe("POST …/events/{studyKey}/submit", () => {
    it("submits the participant's own response: SUBMIT rules run, the response is stored without an account id", async () => {
      const { user, profile, token } = await enrolled();
      const res = await postJson(
        t,
        events("flu", "submit"),
        { profileID: profile.id, response: caseResponse("intake", versions.intake) },
        token,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        assignedSurveys: [
          { surveyKey: "weekly", validFrom: 0, validUntil: 0, category: "normal", studyKey: "flu", profileID: "" },
        ],
        warnings: [],
      });
      const participantId = participantIdOf(flu, profile.id);
      const row = await readParticipant(t.database.db, "flu", participantId);
      expect(row).toMatchObject({ flags: { intakeDone: "yes", ageGroup: "2" }, lastSubmissions: { intake: NOW_S } });
      const [stored] = await t.database.db
        .select()
        .from(surveyResponses)
        .where(eq(surveyResponses.participantId, participantId));
      expect(stored).toMatchObject({ key: "intake", versionId: versions.intake, arrivedAt: NOW_S });
      expect(stored!.context).toEqual({
        engineVersion: "1.2.0",
        language: "en",
        session: "",
        submittedBy: "participant",
      });
      expect(JSON.stringify(stored)).not.toContain(profile.id);
      expect(JSON.stringify(stored)).not.toContain(user.user.id);
    });

    it("a client cannot pose as someone else in context.submittedBy", async () => {
      const { profile, token } = await enrolled();
      const response = { ...caseResponse("intake", versions.intake), context: { submittedBy: "researcher-x" } };
      expect((await postJson(t, events("flu", "submit"), { profileID: profile.id, response }, token)).status).toBe(200);
      const [stored] = await t.database.db
        .select()
        .from(surveyResponses)
        .where(eq(surveyResponses.participantId, participantIdOf(flu, profile.id)));
      expect(stored!.context).toEqual({ session: "", submittedBy: "participant" });
    });

    it("an unknown versionId in a recording study: stored, recorded as a rule failure, returned as a warning", async () => {
      const { profile, token } = await enrolled();
      const res = await postJson(
        t,
        events("flu", "submit"),
        { profileID: profile.id, response: caseResponse("intake", "25-01-9") },
        token,
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { assignedSurveys: { surveyKey: string }[]; warnings: unknown[] };
      expect(body.assignedSurveys.map((s) => s.surveyKey)).toEqual(["weekly"]);
      const warning = {
        eventType: "SUBMIT",
        ruleIndex: -1,
        path: "response.versionId",
        message: expect.stringMatching(/^versionId "25-01-9" is not an uploaded version of survey "intake"/),
        outcome: "rule-skipped",
      };
      expect(body.warnings).toEqual([warning]);
      const participantId = participantIdOf(flu, profile.id);
      expect(
        await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, participantId)),
      ).toHaveLength(1);

      const reader = await researcher(t, "flu", "read-rule-failures");
      const listed = await get(`/v1/studies/flu/rule-failures?participantId=${participantId}`, reader.token);
      expect((await listed.json()).ruleFailures).toEqual([
        expect.objectContaining({ ...warning, participantId, eventKey: "intake", rulesVersion: null, taskId: null }),
      ]);
    });

    it("a version of another survey is unknown; an empty or missing versionId is not checked", async () => {
      // weekly has versions 26-06-1 and 26-06-2, intake only 26-06-1
      await uploadSurvey(t, "mixed", surveyToken, caseSurvey("intake"));
      await uploadSurvey(t, "mixed", surveyToken, caseSurvey("weekly"));
      expect(await uploadSurvey(t, "mixed", surveyToken, caseSurvey("weekly"))).toBe("26-06-2");
      const { profile, token } = await enrolled("mixed");
      const submit = (response: unknown) =>
        postJson(t, events("mixed", "submit"), { profileID: profile.id, response }, token);
      const mismatched = await submit(caseResponse("intake", "26-06-2"));
      expect((await mismatched.json()).warnings).toMatchObject([{ path: "response.versionId" }]);
      expect((await (await submit(caseResponse("weekly", "26-06-2"))).json()).warnings).toEqual([]);
      for (const versionId of ["", undefined]) {
        const res = await submit(caseResponse("weekly", versionId));
        expect(res.status).toBe(200);
        expect((await res.json()).warnings).toEqual([]);
      }
    });

    it("a survey of which a recording study holds no version is not checked (its definitions live elsewhere)", async () => {
      // "mixed" holds intake and weekly; "symptoms" was never uploaded there
      const { profile, token } = await enrolled("mixed");
      const res = await postJson(
        t,
        events("mixed", "submit"),
        { profileID: profile.id, response: caseResponse("symptoms", "23-01-4") },
        token,
      );
      expect(res.status).toBe(200);
      expect((await res.json()).warnings).toEqual([]);
      const recorded = await t.database.db.execute(
        sql`select count(*)::int as n from rule_failures where study_key = 'mixed' and event_key = 'symptoms'`,
      );
      expect(recorded[0]).toEqual({ n: 0 });
    });

    it("an unpublished version is still a known one", async () => {
      const study = "covid";
      const old = await uploadSurvey(t, study, surveyToken, caseSurvey("intake"));
      expect((await postJson(t, `/v1/studies/${study}/surveys/intake/unpublish`, {}, surveyToken)).status).toBe(200);
      const { profile, token } = await enrolled(study);
      const res = await postJson(
        t,
        events(study, "submit"),
        { profileID: profile.id, response: caseResponse("intake", old) },
        token,
      );
      expect((await res.json()).warnings).toEqual([]);
    });

    it("an unknown versionId in a rejecting study: 400 and nothing stored, for the participant and for researchers", async () => {
      const study = "flu-strict-versions";
      const { profile, token } = await enrolled(study);
      const participantId = participantIdOf(rejecting, profile.id);
      const before = await readParticipant(t.database.db, study, participantId);
      const res = await postJson(
        t,
        events(study, "submit"),
        { profileID: profile.id, response: caseResponse("intake", "25-01-9") },
        token,
      );
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe(
        `versionId "25-01-9" is not an uploaded version of survey "intake" in study "${study}"; the study rejects such responses`,
      );
      const admin = await managementToken(t, "root", true);
      const onBehalf = await postJson(
        t,
        `/v1/studies/${study}/participants/${participantId}/responses`,
        caseResponse("intake", "25-01-9"),
        admin,
      );
      expect(onBehalf.status).toBe(400);
      // a rejecting study holds every survey to its uploads: one never uploaded is refused too
      const neverUploaded = await postJson(
        t,
        events(study, "submit"),
        { profileID: profile.id, response: caseResponse("weekly", "26-06-1") },
        token,
      );
      expect(neverUploaded.status).toBe(400);
      expect(await readParticipant(t.database.db, study, participantId)).toEqual(before);
      expect(
        await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, participantId)),
      ).toHaveLength(0);
      expect(await t.database.db.select().from(ruleFailures).where(eq(ruleFailures.studyKey, study))).toHaveLength(0);
      const known = await postJson(
        t,
        events(study, "submit"),
        { profileID: profile.id, response: caseResponse("intake", "26-06-1") },
        token,
      );
      expect(known.status).toBe(200);
    });

    it("researchers' on-behalf submissions are checked too (recording study)", async () => {
      const { profile } = await enrolled();
      const participantId = participantIdOf(flu, profile.id);
      const admin = await managementToken(t, "root", true);
      const res = await postJson(
        t,
        `/v1/studies/flu/participants/${participantId}/responses`,
        caseResponse("intake", "99-99-9"),
        admin,
      );
      expect(res.status).toBe(200);
      expect((await res.json()).warnings).toMatchObject([{ ruleIndex: -1, path: "response.versionId" }]);
      const [failure] = await t.database.db
        .select()
        .from(ruleFailures)
        .where(eq(ruleFailures.participantId, participantId));
      expect(failure).toMatchObject({
        eventType: "SUBMIT",
        eventKey: "intake",
        rulesVersion: null,
        outcome: "rule-skipped",
      });
    });

    it("400 for a bad body, 404 without study or participant, 409 for an inactive study or participant", async () => {
      const { user, profile, token } = await enrolled();
      const submit = (study: string, body: unknown) => postJson(t, events(study, "submit"), body, token);
      for (const [body, message] of [
        [{ profileID: profile.id }, /body\.response/],
        [{ profileID: profile.id, response: { responses: [] } }, /body\.response\.key/],
        [
          { profileID: profile.id, response: { key: "intake", submittedAt: "yesterday" } },
          /body\.response\.submittedAt/,
        ],
        [{ response: caseResponse("intake", undefined) }, /body\.profileID/],
      ] as const) {
        const res = await submit("flu", body);
        expect(res.status).toBe(400);
        expect((await res.json()).error).toMatch(message);
      }
      const ok = { profileID: profile.id, response: caseResponse("intake", undefined) };
      expect((await submit("nope", ok)).status).toBe(404);
      const notEntered = await submit("covid", ok);
      expect(notEntered.status).toBe(404);
      expect(await notEntered.json()).toEqual({ error: 'profile is not a participant of study "covid"' });
      const child = { profileID: user.profiles[1]!.id, response: caseResponse("intake", undefined) };
      expect((await submit("flu", child)).status).toBe(404);
      expect((await submit("closed", ok)).status).toBe(409);
      expect((await postJson(t, events("flu", "leave"), { profileID: profile.id }, token)).status).toBe(200);
      const exited = await submit("flu", ok);
      expect(exited.status).toBe(409);
      expect(await exited.json()).toEqual({ error: 'participant is not active in study "flu" (status "exited")' });
    });
  });

  describe("POST …/events/{studyKey}/custom", () => {
    it("runs the CUSTOM handler of the event key with the payload", async () => {
      const { profile, token } = await enrolled();
      const res = await postJson(
        t,
        events("flu", "custom"),
        { profileID: profile.id, eventKey: "KIT_ORDERED", payload: { kitType: "saliva", quantity: 2 } },
        token,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        assignedSurveys: [
          expect.objectContaining({ surveyKey: "intake", category: "prio" }),
          { surveyKey: "kitFeedback", validFrom: 0, validUntil: 0, category: "normal", studyKey: "flu", profileID: "" },
        ],
        warnings: [],
      });
      const row = await readParticipant(t.database.db, "flu", participantIdOf(flu, profile.id));
      expect(row?.flags).toEqual({ kitType: "saliva" });
      expect(row?.modifiedAt).toBe(NOW_S);
    });

    it("another event key leaves the state as it was; payload defaults to {}", async () => {
      const { profile, token } = await enrolled();
      const before = await readParticipant(t.database.db, "flu", participantIdOf(flu, profile.id));
      const other = await postJson(
        t,
        events("flu", "custom"),
        { profileID: profile.id, eventKey: "APP_OPENED" },
        token,
      );
      expect(other.status).toBe(200);
      const after = await readParticipant(t.database.db, "flu", participantIdOf(flu, profile.id));
      expect(after?.flags).toEqual(before?.flags);
      expect(after?.assignedSurveys).toEqual(before?.assignedSurveys);
      const empty = await postJson(
        t,
        events("flu", "custom"),
        { profileID: profile.id, eventKey: "KIT_ORDERED" },
        token,
      );
      expect(empty.status).toBe(200);
      const row = await readParticipant(t.database.db, "flu", participantIdOf(flu, profile.id));
      expect(row?.flags).toEqual({ kitType: "" });
    });

    it("400 for a missing, empty or non-string eventKey and a payload that is no object", async () => {
      const { profile, token } = await enrolled();
      for (const [body, message] of [
        [{ profileID: profile.id }, /body\.eventKey/],
        [{ profileID: profile.id, eventKey: "" }, /eventKey must not be empty/],
        [{ profileID: profile.id, eventKey: 5 }, /eventKey must be a string/],
        [{ profileID: profile.id, eventKey: "KIT_ORDERED", payload: [1, 2] }, /payload must be a JSON object/],
        [{ profileID: profile.id, eventKey: "KIT_ORDERED", payload: "saliva" }, /payload must be a JSON object/],
      ] as const) {
        const res = await postJson(t, events("flu", "custom"), body, token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect((await res.json()).error).toMatch(message);
      }
      const row = await readParticipant(t.database.db, "flu", participantIdOf(flu, profile.id));
      expect(row?.flags).toEqual({});
    });

    it("404 without study or participant, 409 for an inactive study or participant", async () => {
      const { profile, token } = await enrolled();
      const raise = (study: string) =>
        postJson(t, events(study, "custom"), { profileID: profile.id, eventKey: "KIT_ORDERED" }, token);
      expect((await raise("nope")).status).toBe(404);
      expect((await raise("covid")).status).toBe(404);
      expect((await raise("closed")).status).toBe(409);
      await t.database.db
        .update(participants)
        .set({ studyStatus: "paused" })
        .where(eq(participants.participantId, participantIdOf(flu, profile.id)));
      expect((await raise("flu")).status).toBe(409);
    });
  });

  describe("GET …/participant/studies", () => {
    it("lists the studies the profile takes part in, whatever its status, with the study's props", async () => {
      const { user, profile, token } = await enrolled();
      expect((await postJson(t, events("covid", "enter"), { profileID: profile.id }, token)).status).toBe(200);
      expect((await postJson(t, events("covid", "leave"), { profileID: profile.id }, token)).status).toBe(200);
      const res = await get(views("studies", profile.id), token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        studies: [
          {
            studyKey: "covid",
            participantStatus: "exited",
            enteredAt: NOW_S,
            props: { name: {}, description: {}, tags: [] },
          },
          {
            studyKey: "flu",
            participantStatus: "active",
            enteredAt: NOW_S,
            props: {
              name: { en: "Flu watch", de: "Grippe-Radar" },
              description: { en: "Weekly symptoms" },
              tags: ["influenza"],
              startDate: "2026-05-01",
            },
          },
        ],
      });
      const child = await get(views("studies", user.profiles[1]!.id), token);
      expect(await child.json()).toEqual({ studies: [] });
    });
  });

  describe("GET …/participant/studies/{studyKey}", () => {
    it("shows the participant's own state: status, surveys with validity, flags, submissions; nothing that links or is internal", async () => {
      const { profile, token } = await enrolled();
      await postJson(
        t,
        events("flu", "submit"),
        { profileID: profile.id, response: caseResponse("intake", versions.intake, "3") },
        token,
      );
      const res = await get(views("studies/flu", profile.id), token);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toEqual({
        participant: {
          studyKey: "flu",
          studyStatus: "active",
          enteredAt: NOW_S,
          assignedSurveys: [
            {
              surveyKey: "weekly",
              validFrom: 0,
              validUntil: 0,
              category: "normal",
              studyKey: "flu",
              profileID: profile.id,
            },
          ],
          flags: { intakeDone: "yes", ageGroup: "3" },
          lastSubmissions: { intake: NOW_S },
        },
      });
      const text = JSON.stringify(body);
      expect(text).not.toContain(participantIdOf(flu, profile.id));
      expect(text).not.toContain("PANEL-123");
    });

    it("404 for a profile that is no participant and for an unknown study; 400 without profileID", async () => {
      const { user, profile, token } = await enrolled();
      const other = await get(views("studies/flu", user.profiles[1]!.id), token);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({ error: 'profile is not a participant of study "flu"' });
      expect((await get(views("studies/nope", profile.id), token)).status).toBe(404);
      const missing = await get("/v1/study-service/participant/studies/flu", token);
      expect(missing.status).toBe(400);
      expect((await missing.json()).error).toMatch(/query\.profileID/);
    });
  });

  describe("GET …/participant/studies/{studyKey}/surveys/{surveyKey}", () => {
    const surveyPath = (study: string, survey: string, profileId: string) =>
      views(`studies/${study}/surveys/${survey}`, profileId);

    it("gives the current version of an assigned, valid survey, as a CASE Survey with the server's versionId", async () => {
      const { profile, token } = await enrolled();
      const res = await get(surveyPath("flu", "intake", profile.id), token);
      expect(res.status).toBe(200);
      const { survey } = await res.json();
      expect(survey).toMatchObject({
        versionId: versions.intake,
        published: NOW_S,
        availableFor: "active_participants",
        surveyDefinition: { key: "intake", items: expect.any(Array) },
      });
      expect(survey).not.toHaveProperty("id");
      expect(survey).not.toHaveProperty("publishedBy");

      // a new upload is what the participant gets next
      const newer = await uploadSurvey(t, "flu", surveyToken, caseSurvey("intake", { availableFor: "public" }));
      const next = (await (await get(surveyPath("flu", "intake", profile.id), token)).json()).survey;
      expect(next).toMatchObject({ versionId: newer, availableFor: "public" });
    });

    it("403 for a survey not assigned, or assigned but not valid now", async () => {
      const { profile, token } = await enrolled();
      const notAssigned = await get(surveyPath("flu", "weekly", profile.id), token);
      expect(notAssigned.status).toBe(403);
      expect(await notAssigned.json()).toEqual({ error: 'survey "weekly" is not assigned to this participant' });

      await postJson(
        t,
        events("flu", "submit"),
        { profileID: profile.id, response: caseResponse("intake", versions.intake) },
        token,
      );
      expect((await get(surveyPath("flu", "intake", profile.id), token)).status).toBe(403);
      expect((await get(surveyPath("flu", "weekly", profile.id), token)).status).toBe(200);
      // submitting the weekly schedules the next one a week from now
      await postJson(
        t,
        events("flu", "submit"),
        { profileID: profile.id, response: caseResponse("weekly", versions.weekly) },
        token,
      );
      const early = await get(surveyPath("flu", "weekly", profile.id), token);
      expect(early.status).toBe(403);
      expect((await early.json()).error).toMatch(
        /assigned to this participant but not valid now \(valid from 2026-06-08/,
      );
      t.setNow(NOW + 7 * DAY * 1000);
      expect((await get(surveyPath("flu", "weekly", profile.id), token)).status).toBe(200);
    });

    it("403 once the assignment's validUntil has passed", async () => {
      const { profile, token } = await enrolled();
      t.setNow(NOW + 30 * DAY * 1000);
      expect((await get(surveyPath("flu", "intake", profile.id), token)).status).toBe(200);
      t.setNow(NOW + 30 * DAY * 1000 + 1000);
      expect((await get(surveyPath("flu", "intake", profile.id), token)).status).toBe(403);
    });

    it("404 when the assigned survey has no published version (never uploaded, or unpublished)", async () => {
      const { profile, token } = await enrolled();
      await postJson(t, events("flu", "custom"), { profileID: profile.id, eventKey: "KIT_ORDERED" }, token);
      const never = await get(surveyPath("flu", "kitFeedback", profile.id), token);
      expect(never.status).toBe(404);
      expect(await never.json()).toEqual({ error: 'survey "kitFeedback" has no published version in study "flu"' });

      const covid = await enrolled("covid");
      await uploadSurvey(t, "covid", surveyToken, caseSurvey("intake"));
      expect((await get(surveyPath("covid", "intake", covid.profile.id), covid.token)).status).toBe(200);
      await postJson(t, "/v1/studies/covid/surveys/intake/unpublish", {}, surveyToken);
      expect((await get(surveyPath("covid", "intake", covid.profile.id), covid.token)).status).toBe(404);
      await uploadSurvey(t, "covid", surveyToken, caseSurvey("intake"));
      expect((await get(surveyPath("covid", "intake", covid.profile.id), covid.token)).status).toBe(200);
    });

    it("404 for a profile that is no participant of the study", async () => {
      const { profile, token } = await enrolled();
      expect((await get(surveyPath("flu-strict-versions", "intake", profile.id), token)).status).toBe(404);
      expect((await get(surveyPath("nope", "intake", profile.id), token)).status).toBe(404);
    });
  });

  describe("security", () => {
    it("every participant route: 401 without a token or with a management token, 403 for another user's profile", async () => {
      const owner = await enrolled();
      const other = await participantUser(t);
      const admin = await managementToken(t, "root", true);
      const id = owner.profile.id;
      const operations: [string, string, unknown][] = [
        ["POST", events("flu", "submit"), { profileID: id, response: caseResponse("intake", versions.intake) }],
        ["POST", events("flu", "custom"), { profileID: id, eventKey: "KIT_ORDERED" }],
        ["GET", views("studies", id), undefined],
        ["GET", views("studies/flu", id), undefined],
        ["GET", views("studies/flu/surveys/intake", id), undefined],
      ];
      const before = await readParticipant(t.database.db, "flu", participantIdOf(flu, id));
      for (const [method, path, body] of operations) {
        const send = (token?: string) => (method === "GET" ? get(path, token) : postJson(t, path, body, token));
        const none = await send();
        expect(none.status, `${method} ${path}`).toBe(401);
        expect(await none.json()).toEqual({ error: "missing Authorization header" });
        expect((await send(admin)).status, `${method} ${path}`).toBe(401);
        const foreign = await send(other.token);
        expect(foreign.status, `${method} ${path}`).toBe(403);
        expect(await foreign.json()).toEqual({ error: "profile does not belong to the signed-in user" });
      }
      expect(await readParticipant(t.database.db, "flu", participantIdOf(flu, id))).toEqual(before);
      expect(
        await t.database.db
          .select()
          .from(surveyResponses)
          .where(eq(surveyResponses.participantId, participantIdOf(flu, id))),
      ).toHaveLength(0);
    });

    it("documents every participant operation with participant security", async () => {
      const doc = await (await t.app.request("/openapi.json")).json();
      for (const [method, path] of [
        ["post", "/v1/study-service/events/{studyKey}/submit"],
        ["post", "/v1/study-service/events/{studyKey}/custom"],
        ["get", "/v1/study-service/participant/studies"],
        ["get", "/v1/study-service/participant/studies/{studyKey}"],
        ["get", "/v1/study-service/participant/studies/{studyKey}/surveys/{surveyKey}"],
      ] as const) {
        const operation = doc.paths[path]?.[method];
        expect(operation, `${method} ${path}`).toBeDefined();
        expect(operation.security).toEqual([{ participantBearer: [] }]);
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403"]));
      }
    });
  });
});
