import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditLog, permissions, surveyResponses, surveyVersions } from "@studyflow/db";
import { managementToken, researcher, setupStudy } from "../fixtures";
import { caseSurvey } from "../survey-fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const STUDY = "flu";

/** The survey case-admin sends: its editor's Survey with id, published and unpublished cleared, versionId "". */
const asCaseAdminSends = (key: string) => ({ ...caseSurvey(key), id: undefined, versionId: "", published: undefined });

describe("case-admin survey pages against studyflow", () => {
  let t: TestApp;
  let admin: string;
  let manager: string;
  const params = (extra: Record<string, string> = {}) => ({ studyKey: STUDY, ...extra });
  const versionRows = () => t.database.db.select().from(surveyVersions);
  const auditRows = () => t.database.db.select().from(auditLog);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: STUDY });
    admin = await managementToken(t, "root", true);
    manager = (await researcher(t, STUDY, "manage-surveys")).token;
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    t.setNow(NOW);
    await t.database.sql`delete from survey_versions`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from audit_log`;
  });

  const create = (key: string, token = manager) =>
    replayCaseAdminCall(t, caseAdminCall("createNewSurvey"), { params: params(), body: asCaseAdminSends(key), token });
  const upload = (key: string, token = manager, body: unknown = asCaseAdminSends(key)) =>
    replayCaseAdminCall(t, caseAdminCall("uploadSurvey"), { params: params({ surveyKey: key }), body, token });

  it("creates a survey (201 {survey}), then uploads new versions (200 {survey}) as text/plain bodies", async () => {
    const created = await create("intake");
    expect(created.failed).toBe(false);
    expect(created.status).toBe(201);
    expect(created.body.survey).toMatchObject({ surveyKey: "intake", versionId: "26-06-1", published: NOW / 1000 });
    expect(created.body.survey.surveyDefinition.key).toBe("intake");

    t.setNow(NOW + 60_000);
    const next = await upload("intake");
    expect(next.failed).toBe(false);
    expect(next.body.survey).toMatchObject({ surveyKey: "intake", versionId: "26-06-2", published: NOW / 1000 + 60 });
    // the upload page may also name a survey that has no version yet
    expect((await upload("weekly")).status).toBe(200);
    expect((await auditRows()).map((row) => row.action)).toEqual([
      "survey.publish",
      "survey.publish",
      "survey.publish",
    ]);
  });

  it("lists survey keys, versions (without items and rules) and one version as case-admin reads them", async () => {
    await create("intake");
    t.setNow(NOW + 60_000);
    await upload("intake");
    const list = await replayCaseAdminCall(t, caseAdminCall("getSurveyInfos"), { params: params(), token: manager });
    expect(list.failed).toBe(false);
    expect((list.body.surveys as { key: string }[]).map((s) => s.key)).toEqual(["intake"]);

    const versions = await replayCaseAdminCall(t, caseAdminCall("getSurveyVersions"), {
      params: params({ surveyKey: "intake" }),
      token: manager,
    });
    expect(versions.failed).toBe(false);
    expect((versions.body.versions as { versionId: string }[]).map((v) => v.versionId)).toEqual(["26-06-2", "26-06-1"]);
    expect(versions.body.versions[0].published).toBe(NOW / 1000 + 60);
    expect(versions.body.versions[0].surveyDefinition).not.toHaveProperty("items");

    const one = await replayCaseAdminCall(t, caseAdminCall("getSurveyVersion"), {
      params: params({ surveyKey: "intake", versionID: "26-06-1" }),
      token: manager,
    });
    expect(one.failed).toBe(false);
    expect(one.body.survey.versionId).toBe("26-06-1");
    expect(one.body.survey.surveyDefinition.items).toEqual(caseSurvey("intake").surveyDefinition.items);
  });

  it("a survey key that exists is a 409 for create, and stores nothing", async () => {
    await create("intake");
    const again = await create("intake");
    expect(again.failed).toBe(true);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/survey key already exists/);
    expect(await versionRows()).toHaveLength(1);
  });

  it("400 when the upload's key is not the path's, or the body is missing or broken; nothing stored", async () => {
    const call = caseAdminCall("uploadSurvey");
    const mismatch = await upload("intake", manager, asCaseAdminSends("weekly"));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatch(/surveyDefinition\.key/);
    for (const rawBody of ["", "{", "[]"]) {
      const bad = await replayCaseAdminCall(t, call, {
        params: params({ surveyKey: "intake" }),
        rawBody,
        token: manager,
      });
      expect(bad.status, rawBody).toBe(400);
      expect(bad.body.error, rawBody).toEqual(expect.any(String));
    }
    expect(await versionRows()).toHaveLength(0);
    expect(await auditRows()).toHaveLength(0);
  });

  it("unpublish answers 200 also when the survey is already unpublished", async () => {
    await create("intake");
    const call = caseAdminCall("unpublishSurvey");
    const first = await replayCaseAdminCall(t, call, { params: params({ surveyKey: "intake" }), token: manager });
    expect(first.failed).toBe(false);
    expect(first.body.message).toBe("survey unpublished");
    const second = await replayCaseAdminCall(t, call, { params: params({ surveyKey: "intake" }), token: manager });
    expect(second.failed).toBe(false);
    expect(second.body.versionsUnpublished).toBe(0);
    expect((await auditRows()).filter((row) => row.action === "survey.unpublish")).toHaveLength(1);
    const unknown = await replayCaseAdminCall(t, call, { params: params({ surveyKey: "nope" }), token: manager });
    expect(unknown.status).toBe(404);
  });

  describe("delete a version", () => {
    const del = (surveyKey: string, versionId: string, token = manager) =>
      replayCaseAdminCall(t, caseAdminCall("deleteSurveyVersion"), { params: params({ surveyKey, versionId }), token });

    it("deletes it; the previous version is current again and the id is never reused", async () => {
      await create("intake");
      await upload("intake");
      const deleted = await del("intake", "26-06-2");
      expect(deleted.failed).toBe(false);
      expect(deleted.body).toEqual({ message: "survey version deleted", currentVersionId: "26-06-1" });
      expect((await versionRows()).map((row) => row.versionId)).toEqual(["26-06-1"]);
      const audit = (await auditRows()).filter((row) => row.action === "survey.version.delete");
      expect(audit).toMatchObject([{ target: "intake", details: { versionId: "26-06-2" } }]);
      expect((await upload("intake")).body.survey.versionId).toBe("26-06-3");
    });

    it("409 when stored responses name the version (documented difference), 404 when unknown; nothing deleted", async () => {
      await create("intake");
      await t.database.db.insert(surveyResponses).values({
        studyKey: STUDY,
        participantId: "p1",
        key: "intake",
        versionId: "26-06-1",
        arrivedAt: 1,
      });
      const named = await del("intake", "26-06-1");
      expect(named.failed).toBe(true);
      expect(named.status).toBe(409);
      expect(named.body.error).toMatch(/named by 1 response/);
      expect((await del("intake", "26-01-9")).status).toBe(404);
      expect((await del("nope", "26-06-1")).status).toBe(404);
      expect(await versionRows()).toHaveLength(1);
      expect((await auditRows()).filter((row) => row.action === "survey.version.delete")).toHaveLength(0);
    });
  });

  describe("permissions", () => {
    it("401 without a token and 403 without the right, writing nothing", async () => {
      await create("intake");
      const stranger = await managementToken(t, "stranger");
      const reader = (await researcher(t, STUDY, "read-study-config")).token;
      const calls = [
        () => create("weekly", ""),
        () => upload("intake", ""),
        () => create("weekly", stranger),
        () => upload("intake", reader),
        () =>
          replayCaseAdminCall(t, caseAdminCall("unpublishSurvey"), {
            params: params({ surveyKey: "intake" }),
            token: reader,
          }),
        () =>
          replayCaseAdminCall(t, caseAdminCall("deleteSurveyVersion"), {
            params: params({ surveyKey: "intake", versionId: "26-06-1" }),
            token: reader,
          }),
      ];
      for (const [index, call] of calls.entries()) {
        const answer = await call();
        expect(answer.status, String(index)).toBe(index < 2 ? 401 : 403);
        expect(answer.body.error, String(index)).toEqual(expect.any(String));
      }
      const [row] = await versionRows();
      expect(row?.unpublishedAt).toBeNull();
      expect(await versionRows()).toHaveLength(1);
      // read-study-config reads every survey page
      const list = await replayCaseAdminCall(t, caseAdminCall("getSurveyInfos"), { params: params(), token: reader });
      expect(list.failed).toBe(false);
    });

    it("a grant limited to one survey key covers that survey only", async () => {
      await create("intake");
      await create("weekly");
      const limited = await managementToken(t, "limited");
      await t.database.db.insert(permissions).values({
        subjectId: "limited",
        studyKey: STUDY,
        action: "update-survey",
        limiter: [{ surveyKey: "intake" }],
      });
      expect((await upload("intake", limited)).status).toBe(200);
      expect((await upload("weekly", limited)).status).toBe(403);
      const weekly = await t.database.db
        .select()
        .from(surveyVersions)
        .where(and(eq(surveyVersions.studyKey, STUDY), eq(surveyVersions.surveyKey, "weekly")));
      expect(weekly).toHaveLength(1);
      expect((await upload("intake", admin)).status).toBe(200);
    });
  });
});
