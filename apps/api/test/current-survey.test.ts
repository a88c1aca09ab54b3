import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bearer, managementToken, participantUser, postJson, researcher, setupStudy } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const survey = (study: string, key: string) => `/v1/studies/${study}/surveys/${key}`;

describe("GET /v1/studies/{studyKey}/surveys/{surveyKey}/ (current version)", () => {
  let t: TestApp;
  let token: string;

  const get = (path: string, auth = token) => t.app.request(path, { headers: bearer(auth) });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "covid" });
    ({ token } = await researcher(t, "flu", "read-study-config"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    t.setNow(NOW);
    await t.database.sql`delete from survey_versions`;
    await uploadSurvey(t, "flu", await managementToken(t, "root", true), caseSurvey("intake"));
    t.setNow(NOW + 60_000);
    await uploadSurvey(
      t,
      "flu",
      await managementToken(t, "root", true),
      caseSurvey("intake", { availableFor: "public" }),
    );
  });

  it("answers the newest published version as a CASE Survey, with or without the trailing slash", async () => {
    for (const path of [survey("flu", "intake"), `${survey("flu", "intake")}/`]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      const body = await res.json();
      expect(body.survey).toMatchObject({
        surveyKey: "intake",
        versionId: "26-06-2",
        availableFor: "public",
        published: NOW / 1000 + 60,
        surveyDefinition: { key: "intake" },
      });
    }
  });

  it("404 once every version is unpublished, and for an unknown survey or study", async () => {
    const admin = await managementToken(t, "root", true);
    expect((await postJson(t, `${survey("flu", "intake")}/unpublish`, {}, admin)).status).toBe(200);
    for (const path of [survey("flu", "intake"), survey("flu", "nope"), survey("covid", "intake")]) {
      const res = await get(path, admin);
      expect(res.status, path).toBe(404);
      expect(Object.keys(await res.json()), path).toEqual(["error"]);
    }
    const res = await get(survey("nope", "intake"), admin);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'study "nope" not found' });
  });

  it("401 without a token or with a participant token; 403 without the permission or for another study", async () => {
    expect((await t.app.request(survey("flu", "intake"))).status).toBe(401);
    const participant = await participantUser(t);
    expect((await get(survey("flu", "intake"), participant.token)).status).toBe(401);
    const other = await researcher(t, "covid", "read-study-config");
    expect((await get(survey("flu", "intake"), other.token)).status).toBe(403);
    const wrong = await researcher(t, "flu", "get-responses");
    const res = await get(survey("flu", "intake"), wrong.token);
    expect(res.status).toBe(403);
    expect(Object.keys(await res.json())).toEqual(["error"]);
  });
});
