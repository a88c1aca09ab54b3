import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { participants, studyCounters, surveyResponses } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setStudyVariable } from "@studyflow/domain/study-config";
import { insertParticipant, managementToken, num, participantIdOf, participantUser, setupStudy, str } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const DAY = 86_400;

const exp = (name: string, ...data: object[]) => ({ dtype: "exp", exp: { name, data } });
const answer = (key: string, choice: string) => ({
  key,
  meta: { position: 0, rendered: [], displayed: [], responded: [] },
  response: { key: "rg", items: [{ key: "scg", items: [{ key: choice }] }] },
});

/**
 * The prefill rules case-editor-tools write for an intake with optional questions: a constant
 * on Q2, Q1's last answer from the past week, Q3's last answer at any time, and a rule for an item
 * (Q9) the current version no longer has.
 */
const prefillRules = [
  { name: "PREFILL_SLOT_WITH_VALUE", data: [str("intake.Q2"), str("rg.scg.2"), str("")] },
  { name: "PREFILL_ITEM_WITH_LAST_RESPONSE", data: [str("intake.Q1"), exp("timestampWithOffset", num(-7 * DAY))] },
  { name: "PREFILL_ITEM_WITH_LAST_RESPONSE", data: [{ str: "intake.Q3" }] },
  { name: "PREFILL_SLOT_WITH_VALUE", data: [str("intake.Q9"), str("rg.num"), num(4)] },
];

const path = (study: string, survey: string, pid?: string) =>
  `/v1/study-service/participant-data/${study}/survey/${survey}${pid === undefined ? "" : `?pid=${pid}`}`;

describe("GET …/participant-data/{studyKey}/survey/{surveyKey}?pid= (survey with context and prefill)", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let user: Awaited<ReturnType<typeof participantUser>>;
  let other: Awaited<ReturnType<typeof participantUser>>;
  let versionId: string;

  const get = (url: string, token?: string) =>
    t.app.request(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-off", status: "inactive" });
    const admin = await managementToken(t, "admin", true);
    versionId = await uploadSurvey(
      t,
      "study-a",
      admin,
      caseSurvey("intake", { prefillRules, contextRules: { mode: { dtype: "str", str: "followup" } } }),
    );
    await uploadSurvey(t, "study-a", admin, caseSurvey("plain"));
    await uploadSurvey(t, "study-a", admin, caseSurvey("weekly", { availableFor: "participants_if_assigned" }));
    await uploadSurvey(
      t,
      "study-a",
      admin,
      caseSurvey("open", {
        availableFor: "public",
        prefillRules: [{ name: "PREFILL_SLOT_WITH_VALUE", data: [str("open.Q2"), str("rg.scg.2"), str("")] }],
      }),
    );
    await uploadSurvey(t, "study-off", admin, caseSurvey("intake"));
    await setStudyVariable(t.database.db, "study-a", "season", { type: "int", value: 2026 }, "test", {
      clock: systemClock,
    });
    await setStudyVariable(
      t.database.db,
      "study-a",
      "closesAt",
      { type: "date", value: "2026-11-01T09:00:00Z" },
      "test",
      { clock: systemClock },
    );
    user = await participantUser(t, ["main", "child"]);
    other = await participantUser(t);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from survey_responses`;
  });

  const mainProfile = () => user.profiles[0]!.id;

  async function enrol(profileId: string, values: Partial<typeof participants.$inferInsert> = {}) {
    const participantId = participantIdOf(study, profileId);
    await insertParticipant(t.database.db, {
      studyKey: "study-a",
      participantId,
      enteredAt: NOW_S - 30 * DAY,
      ...values,
    });
    return participantId;
  }

  async function storeResponse(participantId: string, arrivedAt: number, responses: object[]) {
    await t.database.db
      .insert(surveyResponses)
      .values({ studyKey: "study-a", participantId, key: "intake", versionId, arrivedAt, responses });
  }

  it("answers case-backend's envelope: the current version, flags, variables, mode and the prefill", async () => {
    const participantId = await enrol(mainProfile(), { flags: { group: "b", consent: "yes" } });
    await storeResponse(participantId, NOW_S - 20 * DAY, [answer("intake.Q1", "1"), answer("intake.Q3", "3")]);
    await storeResponse(participantId, NOW_S - 2 * DAY, [answer("intake.Q1", "2")]);

    const res = await get(path("study-a", "intake", mainProfile()), user.token);
    expect(res.status).toBe(200);
    const { surveyWithContext } = (await res.json()) as {
      surveyWithContext: { survey: Record<string, unknown>; context: unknown; prefill: unknown };
    };
    expect(surveyWithContext.survey).toMatchObject({ versionId, surveyDefinition: { key: "intake" } });
    // rules stay on the server, as case-backend clears them
    expect(surveyWithContext.survey).not.toHaveProperty("prefillRules");
    expect(surveyWithContext.survey).not.toHaveProperty("contextRules");
    expect(surveyWithContext.context).toEqual({
      mode: "followup",
      participantFlags: { group: "b", consent: "yes" },
      studyVariables: {
        closesAt: { type: "date", value: "2026-11-01T09:00:00Z" },
        season: { type: "int", value: 2026 },
      },
    });
    expect(surveyWithContext.prefill).toEqual({
      responses: [
        { key: "intake.Q2", response: { key: "rg", items: [{ key: "scg", items: [{ key: "2", value: "" }] }] } },
        // the last response within the week (two days old), not the older one
        answer("intake.Q1", "2"),
        // Q3 (no filter): taken from the newest response of the survey, which has no Q3, as case-backend does
      ],
    });
  });

  it("the time filter leaves out responses older than it; without a filter the newest response counts", async () => {
    const participantId = await enrol(mainProfile());
    await storeResponse(participantId, NOW_S - 20 * DAY, [answer("intake.Q1", "1"), answer("intake.Q3", "3")]);
    const res = await get(path("study-a", "intake", mainProfile()), user.token);
    const { surveyWithContext } = (await res.json()) as {
      surveyWithContext: { prefill: { responses: { key: string }[] } };
    };
    // Q1's filter is one week: the 20-day-old answer is not used; Q3 has no filter: it is
    expect(surveyWithContext.prefill.responses).toEqual([
      { key: "intake.Q2", response: { key: "rg", items: [{ key: "scg", items: [{ key: "2", value: "" }] }] } },
      answer("intake.Q3", "3"),
    ]);
  });

  it("a survey without rules: context with flags and variables, no prefill; empty flags are left out", async () => {
    await enrol(mainProfile());
    const res = await get(path("study-a", "plain", mainProfile()), user.token);
    expect(res.status).toBe(200);
    const { surveyWithContext } = (await res.json()) as { surveyWithContext: Record<string, unknown> };
    expect(surveyWithContext).not.toHaveProperty("prefill");
    expect(surveyWithContext["context"]).toEqual({
      studyVariables: {
        closesAt: { type: "date", value: "2026-11-01T09:00:00Z" },
        season: { type: "int", value: 2026 },
      },
    });
  });

  it("reads only: the participant, its responses and the study's counters are as before", async () => {
    const participantId = await enrol(mainProfile(), { flags: { group: "b" } });
    await storeResponse(participantId, NOW_S - DAY, [answer("intake.Q1", "2")]);
    const before = await t.database.db.select().from(participants);
    const responsesBefore = await t.database.db.select().from(surveyResponses);
    expect((await get(path("study-a", "intake", mainProfile()), user.token)).status).toBe(200);
    expect(await t.database.db.select().from(participants)).toEqual(before);
    expect(await t.database.db.select().from(surveyResponses)).toEqual(responsesBefore);
    expect(await t.database.db.select().from(studyCounters)).toEqual([]);
  });

  it("availableFor: assigned-only surveys need a valid assignment; public ones open for a profile not yet in the study", async () => {
    await enrol(mainProfile());
    const weekly = await get(path("study-a", "weekly", mainProfile()), user.token);
    expect(weekly.status).toBe(403);
    expect(await weekly.json()).toEqual({
      error: 'survey "weekly" is not assigned to this participant or not valid now',
    });
    await t.database.db.update(participants).set({
      assignedSurveys: [{ surveyKey: "weekly", category: "normal", validFrom: NOW_S - 60, validUntil: NOW_S + 60 }],
    });
    expect((await get(path("study-a", "weekly", mainProfile()), user.token)).status).toBe(200);

    // the child profile has not entered the study
    const child = user.profiles[1]!.id;
    expect((await get(path("study-a", "intake", child), user.token)).status).toBe(404);
    const open = await get(path("study-a", "open", child), user.token);
    expect(open.status).toBe(200);
    const body = (await open.json()) as { surveyWithContext: { context: unknown; prefill: unknown } };
    expect(body.surveyWithContext.context).toMatchObject({ studyVariables: { season: { type: "int", value: 2026 } } });
    expect(body.surveyWithContext.prefill).toEqual({
      responses: [
        { key: "open.Q2", response: { key: "rg", items: [{ key: "scg", items: [{ key: "2", value: "" }] }] } },
      ],
    });
  });

  it("security: no token, another user's profile, an unknown one", async () => {
    await enrol(mainProfile());
    expect((await get(path("study-a", "intake", mainProfile()))).status).toBe(401);
    const foreign = await get(path("study-a", "intake", mainProfile()), other.token);
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ error: "profile does not belong to the signed-in user" });
    expect((await get(path("study-a", "intake", "0".repeat(32)), user.token)).status).toBe(403);
    // the other user's own profile is no participant: nothing of the first user's leaks
    expect((await get(path("study-a", "intake", other.profiles[0]!.id), other.token)).status).toBe(404);
  });

  it("errors name what is wrong: pid missing, unknown study or survey, inactive study", async () => {
    await enrol(mainProfile());
    const missing = await get(path("study-a", "intake"), user.token);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: string }).error).toContain("pid");
    expect((await get(path("nope", "intake", mainProfile()), user.token)).status).toBe(404);
    const unknown = await get(path("study-a", "nope", mainProfile()), user.token);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'survey "nope" has no published version in study "study-a"' });
    expect((await get(path("study-off", "intake", mainProfile()), user.token)).status).toBe(409);
  });

  it("uses the survey's current version: items dropped from it are dropped from the prefill", async () => {
    const participantId = await enrol(mainProfile());
    await storeResponse(participantId, NOW_S - DAY, [answer("intake.Q1", "2")]);
    const admin = await managementToken(t, "admin", true);
    const v1 = caseSurvey("intake", { prefillRules });
    const definition = v1.surveyDefinition;
    const next = {
      ...v1,
      surveyDefinition: { ...definition, items: definition.items.filter((item) => item.key !== "intake.Q1") },
    };
    const nextVersion = await uploadSurvey(t, "study-a", admin, next);
    try {
      const res = await get(path("study-a", "intake", mainProfile()), user.token);
      const { surveyWithContext } = (await res.json()) as {
        surveyWithContext: { survey: { versionId: string }; prefill: { responses: { key: string }[] } };
      };
      expect(surveyWithContext.survey.versionId).toBe(nextVersion);
      expect(surveyWithContext.prefill.responses.map((item) => item.key)).toEqual(["intake.Q2"]);
    } finally {
      // the next tests expect the first version's items again
      await uploadSurvey(
        t,
        "study-a",
        admin,
        caseSurvey("intake", { prefillRules, contextRules: { mode: { str: "followup" } } }),
      );
    }
  });

  it("a rule it cannot apply is skipped, the survey still opens", async () => {
    const admin = await managementToken(t, "admin", true);
    await uploadSurvey(
      t,
      "study-a",
      admin,
      caseSurvey("odd", {
        prefillRules: [{ name: "PREFILL_FROM_THE_FUTURE", data: [] }, prefillRules[0]],
        contextRules: { mode: exp("getParticipantFlagValue", str("group")) },
      }),
    );
    await enrol(mainProfile(), { flags: { group: "b" } });
    const res = await get(path("study-a", "odd", mainProfile()), user.token);
    expect(res.status).toBe(200);
    const { surveyWithContext } = (await res.json()) as {
      surveyWithContext: { context: { mode: string }; prefill: { responses: { key: string }[] } };
    };
    expect(surveyWithContext.context.mode).toBe("b");
    // the unknown rule is skipped; the constant rule's item (intake.Q2) is not in this survey: dropped
    expect(surveyWithContext.prefill.responses).toEqual([]);
  });
});
