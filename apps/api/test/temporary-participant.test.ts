import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { participants, surveyResponses } from "@studyflow/db";
import { call, insertParticipant, managementToken, num, onEvent, setupStudy, str } from "./fixtures";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const BASE = "/v1/study-service/temp-participant";

/** The anonymous report flow of a case-editor-tools study: ENTER assigns the report, SUBMIT flags and assigns a follow-up. */
const rules = [
  onEvent("ENTER", call("ADD_NEW_SURVEY", str("report"), num(0), num(0), str("normal"))),
  onEvent(
    "SUBMIT",
    call("UPDATE_FLAG", str("reported"), str("yes")),
    call("REMOVE_ALL_SURVEYS"),
    call("ADD_NEW_SURVEY", str("followup"), num(0), num(0), str("normal")),
  ),
];

const prefillRules = [{ name: "PREFILL_ITEM_WITH_LAST_RESPONSE", data: [{ dtype: "str", str: "report.Q1" }] }];

describe("temporary participants: register, survey with context, submit-response (CASE)", () => {
  let t: TestApp;
  let versionId: string;

  /** As the participant app sends it: JSON text without a Content-Type (fetch makes it text/plain). */
  const postPlain = (path: string, body: unknown, address = "198.51.100.1") =>
    t.app.request(`${BASE}${path}`, {
      method: "POST",
      headers: { "Content-Type": "text/plain;charset=UTF-8", "X-Forwarded-For": address },
      body: JSON.stringify(body),
    });
  const getSurvey = (params: Record<string, string>, address = "198.51.100.1") =>
    t.app.request(`${BASE}/survey?${new URLSearchParams(params).toString()}`, {
      headers: { "X-Forwarded-For": address },
    });

  async function register(address?: string): Promise<string> {
    const res = await postPlain("/register", { studyKey: "study-a", instanceID: t.config.INSTANCE_ID }, address);
    expect(res.status).toBe(200);
    return ((await res.json()) as { participant: { participantId: string } }).participant.participantId;
  }

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    await setupStudy(t, { key: "study-a", rules });
    await setupStudy(t, { key: "study-off", status: "inactive" });
    const admin = await managementToken(t, "admin", true);
    versionId = await uploadSurvey(
      t,
      "study-a",
      admin,
      caseSurvey("report", { availableFor: "temporary_participants", prefillRules }),
    );
    await uploadSurvey(t, "study-a", admin, caseSurvey("public", { availableFor: "public" }));
    await uploadSurvey(t, "study-a", admin, caseSurvey("intake"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from survey_responses`;
  });

  describe("POST /register", () => {
    it("answers 200 to a text/plain body with instanceID, as case-backend", async () => {
      const res = await postPlain("/register", { studyKey: "study-a", instanceID: t.config.INSTANCE_ID });
      expect(res.status).toBe(200);
      const { participant } = (await res.json()) as { participant: Record<string, unknown> };
      expect(participant).toMatchObject({ studyStatus: "temporary" });
      expect(participant["participantId"]).toMatch(/^[0-9a-f]{64}$/);
      // instanceId spelled as the Go struct does is read too
      expect((await postPlain("/register", { studyKey: "study-a", instanceId: t.config.INSTANCE_ID })).status).toBe(
        200,
      );
    });

    it("refuses another instance, a missing study key, an unknown or inactive study", async () => {
      const other = await postPlain("/register", { studyKey: "study-a", instanceID: "elsewhere" });
      expect(other.status).toBe(400);
      expect(((await other.json()) as { error: string }).error).toContain("instanceID");
      const missing = await postPlain("/register", { instanceID: t.config.INSTANCE_ID });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: string }).error).toContain("studyKey");
      expect((await postPlain("/register", { studyKey: "none" })).status).toBe(404);
      expect((await postPlain("/register", { studyKey: "study-off" })).status).toBe(409);
    });
  });

  describe("GET /survey", () => {
    it("with pid: the survey, the temporary participant's context and its prefill from its last response", async () => {
      const pid = await register();
      await t.database.db
        .update(participants)
        .set({ flags: { source: "web" } })
        .where(eq(participants.participantId, pid));
      await t.database.db.insert(surveyResponses).values({
        studyKey: "study-a",
        participantId: pid,
        key: "report",
        versionId,
        arrivedAt: NOW_S - 60,
        responses: caseResponse("report", versionId, "3").responses,
      });
      const res = await getSurvey({ instanceID: t.config.INSTANCE_ID, studyKey: "study-a", surveyKey: "report", pid });
      expect(res.status).toBe(200);
      const { surveyWithContext } = (await res.json()) as {
        surveyWithContext: { survey: Record<string, unknown>; context: unknown; prefill: unknown };
      };
      expect(surveyWithContext.survey).toMatchObject({ versionId, availableFor: "temporary_participants" });
      expect(surveyWithContext.survey).not.toHaveProperty("prefillRules");
      expect(surveyWithContext.context).toEqual({ participantFlags: { source: "web" } });
      expect(surveyWithContext.prefill).toEqual({ responses: caseResponse("report", versionId, "3").responses });
    });

    it("without pid: a public survey only, with no context; a survey for temporary participants needs the pid", async () => {
      const open = await getSurvey({ instanceID: t.config.INSTANCE_ID, studyKey: "study-a", surveyKey: "public" });
      expect(open.status).toBe(200);
      const body = (await open.json()) as { surveyWithContext: Record<string, unknown> };
      expect(Object.keys(body.surveyWithContext)).toEqual(["survey"]);
      const report = await getSurvey({ studyKey: "study-a", surveyKey: "report" });
      expect(report.status).toBe(403);
      expect(await report.json()).toEqual({
        error: 'survey "report" is not public: give the temporary participant\'s pid',
      });
    });

    it("security: a survey for signed-in participants, another participant's id, an unknown id", async () => {
      const pid = await register();
      const intake = await getSurvey({ studyKey: "study-a", surveyKey: "intake", pid });
      expect(intake.status).toBe(403);
      const active = await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "a".repeat(64) });
      const notTemporary = await getSurvey({ studyKey: "study-a", surveyKey: "report", pid: active.participantId });
      expect(notTemporary.status).toBe(404);
      expect(await notTemporary.json()).toEqual({ error: 'temporary participant not found in study "study-a"' });
      expect((await getSurvey({ studyKey: "study-a", surveyKey: "report", pid: "b".repeat(64) })).status).toBe(404);
    });

    it("bad input names the field; unknown study or survey is a 404, another instance a 400", async () => {
      const missing = await getSurvey({ studyKey: "study-a" });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: string }).error).toContain("surveyKey");
      expect((await getSurvey({ studyKey: "none", surveyKey: "report" })).status).toBe(404);
      expect((await getSurvey({ studyKey: "study-a", surveyKey: "none" })).status).toBe(404);
      expect((await getSurvey({ instanceID: "elsewhere", studyKey: "study-a", surveyKey: "public" })).status).toBe(400);
    });

    it("guessing temporary ids is limited per address", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await getSurvey({ studyKey: "study-a", surveyKey: "report", pid: `guess-${i}` }, "203.0.113.50");
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 20).every((status) => status === 404)).toBe(true);
      expect(statuses[20]).toBe(429);
      // another address is not affected
      expect((await getSurvey({ studyKey: "study-a", surveyKey: "public" }, "203.0.113.51")).status).toBe(200);
    });
  });

  describe("POST /submit-response", () => {
    it("runs SUBMIT for the temporary participant and answers its assigned surveys", async () => {
      const pid = await register();
      const res = await postPlain("/submit-response", {
        studyKey: "study-a",
        instanceID: t.config.INSTANCE_ID,
        pid,
        response: caseResponse("report", versionId),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        assignedSurveys: [
          {
            studyKey: "study-a",
            surveyKey: "followup",
            validFrom: 0,
            validUntil: 0,
            category: "normal",
            profileID: "",
          },
        ],
      });
      const [row] = await t.database.db.select().from(participants).where(eq(participants.participantId, pid));
      expect(row).toMatchObject({
        studyStatus: "temporary",
        flags: { reported: "yes" },
        lastSubmissions: { report: NOW_S },
      });
      const stored = await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, pid));
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ key: "report", versionId, arrivedAt: NOW_S });
      expect(stored[0]?.context).toMatchObject({ submittedBy: "participant" });
    });

    it("an Idempotency-Key makes a retry safe: the first answer again, one stored response, 422 for another body", async () => {
      const pid = await register("198.51.100.7");
      const send = (body: unknown) =>
        t.app.request(`${BASE}/submit-response`, {
          method: "POST",
          headers: {
            "Content-Type": "text/plain;charset=UTF-8",
            "X-Forwarded-For": "198.51.100.7",
            "Idempotency-Key": "report-attempt-1",
          },
          body: JSON.stringify(body),
        });
      const request = { studyKey: "study-a", pid, response: caseResponse("report", versionId) };
      const first = await send(request);
      expect(first.status).toBe(200);
      const retry = await send(request);
      expect(retry.status).toBe(200);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(await retry.json()).toEqual(await first.json());
      const stored = await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, pid));
      expect(stored).toHaveLength(1);
      const other = await send({ ...request, response: { ...caseResponse("report", versionId), key: "other" } });
      expect(other.status).toBe(422);
      expect(((await other.json()) as { error: string }).error).toContain("Idempotency-Key");
      expect(
        await t.database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, pid)),
      ).toHaveLength(1);
    });

    it("only temporary participants: another participant's id and an unknown id are alike 404, nothing stored", async () => {
      const active = await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "c".repeat(64) });
      for (const pid of [active.participantId, "d".repeat(64)]) {
        const res = await postPlain("/submit-response", {
          studyKey: "study-a",
          pid,
          response: caseResponse("report", versionId),
        });
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: 'temporary participant not found in study "study-a"' });
      }
      expect(await t.database.db.select().from(surveyResponses)).toEqual([]);
    });

    it("a temporary participant past the age limit can no longer submit", async () => {
      const pid = await register();
      t.setNow(NOW + (t.config.TEMP_PARTICIPANT_MAX_AGE_SECONDS + 1) * 1000);
      try {
        const res = await postPlain("/submit-response", {
          studyKey: "study-a",
          pid,
          response: caseResponse("report", versionId),
        });
        expect(res.status).toBe(409);
        expect(((await res.json()) as { error: string }).error).toContain("too old");
      } finally {
        t.setNow(NOW);
      }
    });

    it("bad input names the field; another instance is refused", async () => {
      const missing = await postPlain("/submit-response", {
        studyKey: "study-a",
        response: caseResponse("report", versionId),
      });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: string }).error).toContain("pid");
      const noResponse = await postPlain("/submit-response", { studyKey: "study-a", pid: "x" });
      expect(noResponse.status).toBe(400);
      expect(((await noResponse.json()) as { error: string }).error).toContain("response");
      const other = await postPlain("/submit-response", {
        studyKey: "study-a",
        instanceId: "elsewhere",
        pid: "x",
        response: caseResponse("report", versionId),
      });
      expect(other.status).toBe(400);
      expect((await postPlain("/submit-response", "not json")).status).toBe(400);
    });
  });
});
