import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditLog, surveyVersions } from "@studyflow/db";
import { MAX_SURVEY_DEFINITION_BYTES } from "@studyflow/domain/surveys";
import { bearer, managementToken, participantUser, postJson, researcher, setupStudy } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const surveys = (study: string) => `/v1/studies/${study}/surveys`;

describe("survey definitions (management)", () => {
  let t: TestApp;
  let token: string;
  let subject: string;

  const get = (path: string, auth = token) => t.app.request(path, { headers: bearer(auth) });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "covid" });
    await setupStudy(t, { key: "paused", status: "inactive" });
    ({ token, subject } = await researcher(t, "flu", "manage-surveys"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    t.setNow(NOW);
    await t.database.sql`delete from survey_versions`;
    await t.database.sql`delete from audit_log`;
  });

  describe("upload", () => {
    it("stores a new version with the server's version id and time, ignoring the client's, and audits it", async () => {
      const res = await postJson(t, surveys("flu"), caseSurvey("intake"), token);
      expect(res.status).toBe(201);
      const created = await res.json();
      expect(created.survey).toMatchObject({
        surveyKey: "intake",
        versionId: "26-06-1",
        published: NOW / 1000,
        id: expect.any(String),
        surveyDefinition: { key: "intake" },
      });
      expect(created.survey).not.toHaveProperty("unpublished");
      expect(created).toMatchObject({
        version: {
          surveyKey: "intake",
          versionId: "26-06-1",
          publishedAt: new Date(NOW).toISOString(),
          publishedBy: subject,
          unpublishedAt: null,
        },
      });
      const [stored] = await t.database.db.select().from(surveyVersions);
      expect(stored!.definition).not.toHaveProperty("versionId");
      expect(stored!.definition).not.toHaveProperty("published");
      expect(stored!.definition).not.toHaveProperty("id");
      expect(stored!.definition).toMatchObject({ availableFor: "active_participants", metadata: expect.any(Object) });
      const audit = await t.database.db.select().from(auditLog);
      expect(audit).toMatchObject([
        {
          studyKey: "flu",
          actor: subject,
          action: "survey.publish",
          target: "intake",
          details: { versionId: "26-06-1", bytes: expect.any(Number) },
          at: new Date(NOW),
        },
      ]);
    });

    it("numbers versions per survey within the month, and starts again in a new month", async () => {
      expect(await uploadSurvey(t, "flu", token, caseSurvey("intake"))).toBe("26-06-1");
      expect(await uploadSurvey(t, "flu", token, caseSurvey("intake"))).toBe("26-06-2");
      expect(await uploadSurvey(t, "flu", token, caseSurvey("weekly"))).toBe("26-06-1");
      t.setNow(Date.UTC(2026, 6, 3));
      expect(await uploadSurvey(t, "flu", token, caseSurvey("intake"))).toBe("26-07-1");
      const admin = await managementToken(t, "root", true);
      expect(await uploadSurvey(t, "covid", admin, caseSurvey("intake"))).toBe("26-07-1");
    });

    it("gives concurrent uploads of one survey distinct version ids", async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, () => postJson(t, `${surveys("flu")}/weekly`, caseSurvey("weekly"), token)),
      );
      expect(results.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const ids = await Promise.all(
        results.map(async (res) => ((await res.json()) as { survey: { versionId: string } }).survey.versionId),
      );
      expect(new Set(ids).size).toBe(6);
      expect([...ids].sort()).toEqual(["26-06-1", "26-06-2", "26-06-3", "26-06-4", "26-06-5", "26-06-6"]);
    });

    it("accepts uploads to an inactive study (set up before launch)", async () => {
      const admin = await managementToken(t, "root", true);
      expect(await uploadSurvey(t, "paused", admin, caseSurvey("intake"))).toBe("26-06-1");
    });
  });

  describe("bad uploads", () => {
    it.each([
      ["an array", [caseSurvey("intake")], /the survey must be a JSON object/],
      ["no surveyDefinition", { props: {} }, /surveyDefinition must be an object/],
      ["a surveyDefinition that is a string", { surveyDefinition: "intake" }, /surveyDefinition must be an object/],
      ["no key", { surveyDefinition: { items: [] } }, /body\.surveyDefinition\.key/],
      ["an empty key", { surveyDefinition: { key: "" } }, /surveyDefinition\.key must not be empty/],
      ["a key with a slash", { surveyDefinition: { key: "a/b" } }, /must not contain spaces, '\/'/],
      ["a numeric key", { surveyDefinition: { key: 7 } }, /body\.surveyDefinition\.key/],
    ])("refuses %s with 400 and stores nothing", async (_, body, message) => {
      const res = await postJson(t, surveys("flu"), body, token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(message);
      expect(await t.database.db.select().from(surveyVersions)).toHaveLength(0);
      expect(await t.database.db.select().from(auditLog)).toHaveLength(0);
    });

    it("refuses malformed JSON with a 400", async () => {
      const res = await postJson(t, surveys("flu"), '{"surveyDefinition": {', token);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    });

    it("refuses a definition over 1 MiB with a 413 naming the limit; a body over 2 MiB too", async () => {
      const padding = "x".repeat(MAX_SURVEY_DEFINITION_BYTES);
      const big = await postJson(t, surveys("flu"), caseSurvey("intake", { metadata: { padding } }), token);
      expect(big.status).toBe(413);
      expect((await big.json()).error).toMatch(/survey definition is \d+ bytes serialized; the limit is 1048576 bytes/);
      const huge = await postJson(
        t,
        surveys("flu"),
        caseSurvey("intake", { metadata: { padding: padding + padding } }),
        token,
      );
      expect(huge.status).toBe(413);
      expect(await huge.json()).toEqual({ error: expect.stringMatching(/larger than/) });
      expect(await t.database.db.select().from(surveyVersions)).toHaveLength(0);
    });

    it("a definition just under the limit is stored", async () => {
      const base = JSON.stringify(caseSurvey("intake", { metadata: { padding: "" }, id: undefined })).length;
      const padding = "y".repeat(MAX_SURVEY_DEFINITION_BYTES - base - 100);
      expect(await uploadSurvey(t, "flu", token, caseSurvey("intake", { metadata: { padding } }))).toBe("26-06-1");
    });
  });

  describe("list, versions, one version", () => {
    beforeEach(async () => {
      await uploadSurvey(t, "flu", token, caseSurvey("intake"));
      t.setNow(NOW + 60_000);
      await uploadSurvey(t, "flu", token, caseSurvey("intake", { availableFor: "public" }));
      await uploadSurvey(t, "flu", token, caseSurvey("weekly"));
      await uploadSurvey(t, "flu", token, caseSurvey("vaccination"));
    });

    it("lists the study's surveys with their current version and version count", async () => {
      const res = await get(surveys("flu"));
      expect(res.status).toBe(200);
      const later = new Date(NOW + 60_000).toISOString();
      expect(await res.json()).toEqual({
        surveys: [
          {
            key: "intake",
            surveyKey: "intake",
            currentVersionId: "26-06-2",
            publishedAt: later,
            versionCount: 2,
            unpublished: false,
            unpublishedAt: null,
          },
          {
            key: "vaccination",
            surveyKey: "vaccination",
            currentVersionId: "26-06-1",
            publishedAt: later,
            versionCount: 1,
            unpublished: false,
            unpublishedAt: null,
          },
          {
            key: "weekly",
            surveyKey: "weekly",
            currentVersionId: "26-06-1",
            publishedAt: later,
            versionCount: 1,
            unpublished: false,
            unpublishedAt: null,
          },
        ],
      });
      const other = await get(surveys("covid"), await managementToken(t, "root", true));
      expect(await other.json()).toEqual({ surveys: [] });
    });

    it("lists a survey's versions newest first as CASE Surveys without items, prefill and context rules", async () => {
      const res = await get(`${surveys("flu")}/intake/versions`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { versions: Record<string, unknown>[] };
      expect(body.versions.map((v) => v["versionId"])).toEqual(["26-06-2", "26-06-1"]);
      expect(body.versions[0]).toMatchObject({ surveyKey: "intake", published: (NOW + 60_000) / 1000 });
      expect(body.versions[1]).toMatchObject({ published: NOW / 1000, availableFor: "active_participants" });
      for (const version of body.versions) {
        expect(version).not.toHaveProperty("prefillRules");
        expect(version).not.toHaveProperty("contextRules");
        expect(version["surveyDefinition"]).toHaveProperty("key", "intake");
        expect(version["surveyDefinition"]).not.toHaveProperty("items");
      }
    });

    it("returns one version with its CASE Survey, the server's versionId and published in it", async () => {
      const res = await get(`${surveys("flu")}/intake/versions/26-06-1`);
      expect(res.status).toBe(200);
      const { survey } = await res.json();
      const { id: _id, versionId: _v, published: _p, ...uploaded } = caseSurvey("intake");
      expect(survey).toEqual({
        ...uploaded,
        id: expect.any(String),
        surveyKey: "intake",
        versionId: "26-06-1",
        published: NOW / 1000,
      });
      const second = await (await get(`${surveys("flu")}/intake/versions/26-06-2`)).json();
      expect(second.survey.availableFor).toBe("public");
    });

    it("404 for an unknown survey, version or study", async () => {
      const admin = await managementToken(t, "root", true);
      for (const [path, message] of [
        [`${surveys("flu")}/nope/versions`, 'survey "nope" not found in study "flu"'],
        [`${surveys("flu")}/intake/versions/26-01-1`, 'survey "intake" has no version "26-01-1" in study "flu"'],
        [`${surveys("flu")}/weekly/versions/26-06-2`, 'survey "weekly" has no version "26-06-2" in study "flu"'],
        [`${surveys("covid")}/intake/versions`, 'survey "intake" not found in study "covid"'],
        [surveys("nope"), 'study "nope" not found'],
      ] as const) {
        const res = await get(path, admin);
        expect(res.status, path).toBe(404);
        expect(await res.json(), path).toEqual({ error: message });
      }
      expect((await postJson(t, surveys("nope"), caseSurvey("intake"), admin)).status).toBe(404);
    });
  });

  describe("unpublish", () => {
    it("stamps every published version; the survey has no current version until the next upload", async () => {
      await uploadSurvey(t, "flu", token, caseSurvey("intake"));
      await uploadSurvey(t, "flu", token, caseSurvey("intake"));
      await uploadSurvey(t, "flu", token, caseSurvey("weekly"));
      t.setNow(NOW + 3_600_000);
      const res = await postJson(t, `${surveys("flu")}/intake/unpublish`, {}, token);
      expect(res.status).toBe(200);
      const at = new Date(NOW + 3_600_000).toISOString();
      expect(await res.json()).toEqual({
        message: "survey unpublished",
        surveyKey: "intake",
        unpublishedAt: at,
        versionsUnpublished: 2,
      });

      const listed = (await (await get(surveys("flu"))).json()).surveys;
      expect(listed[0]).toEqual({
        key: "intake",
        surveyKey: "intake",
        currentVersionId: null,
        publishedAt: null,
        versionCount: 2,
        unpublished: true,
        unpublishedAt: at,
      });
      expect(listed[1]).toMatchObject({ surveyKey: "weekly", currentVersionId: "26-06-1", unpublished: false });
      const old = (await (await get(`${surveys("flu")}/intake/versions/26-06-1`)).json()).survey;
      expect(old.unpublished).toBe((NOW + 3_600_000) / 1000);

      // as case-backend: unpublishing again is no error, and changes nothing
      t.setNow(NOW + 7_200_000);
      const again = await postJson(t, `${surveys("flu")}/intake/unpublish`, {}, token);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({
        message: "survey unpublished",
        surveyKey: "intake",
        unpublishedAt: at,
        versionsUnpublished: 0,
      });

      expect(await uploadSurvey(t, "flu", token, caseSurvey("intake"))).toBe("26-06-3");
      const republished = (await (await get(surveys("flu"))).json()).surveys[0];
      expect(republished).toMatchObject({ currentVersionId: "26-06-3", versionCount: 3, unpublished: false });

      const audit = await t.database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.studyKey, "flu"), eq(auditLog.target, "intake")))
        .orderBy(asc(auditLog.id));
      expect(audit.map((entry) => entry.action)).toEqual([
        "survey.publish",
        "survey.publish",
        "survey.unpublish",
        "survey.publish",
      ]);
      expect(audit[2]).toMatchObject({ actor: subject, details: { versionIds: ["26-06-1", "26-06-2"] } });
    });

    it("404 for an unknown survey or study", async () => {
      expect((await postJson(t, `${surveys("flu")}/nope/unpublish`, {}, token)).status).toBe(404);
      const admin = await managementToken(t, "root", true);
      expect((await postJson(t, `${surveys("nope")}/intake/unpublish`, {}, admin)).status).toBe(404);
      expect(await t.database.db.select().from(auditLog)).toHaveLength(0);
    });
  });

  describe("security", () => {
    const operations = (study: string): [method: string, path: string][] => [
      ["POST", surveys(study)],
      ["POST", `${surveys(study)}/intake`],
      ["GET", surveys(study)],
      ["GET", `${surveys(study)}/intake/versions`],
      ["GET", `${surveys(study)}/intake/versions/26-06-1`],
      ["POST", `${surveys(study)}/intake/unpublish`],
      ["DELETE", `${surveys(study)}/intake/versions/26-06-1`],
    ];
    const call = (method: string, path: string, auth?: string) =>
      method === "POST"
        ? postJson(t, path, caseSurvey("intake"), auth)
        : t.app.request(path, { method, headers: auth ? bearer(auth) : {} });

    beforeEach(async () => {
      await uploadSurvey(t, "flu", token, caseSurvey("intake"));
    });

    it("401 without a token or with a participant token", async () => {
      const user = await participantUser(t);
      for (const [method, path] of operations("flu")) {
        const none = await call(method, path);
        expect(none.status, `${method} ${path}`).toBe(401);
        expect(await none.json()).toEqual({ error: "missing Authorization header" });
        expect((await call(method, path, user.token)).status, `${method} ${path}`).toBe(401);
      }
    });

    it("403 without manage-surveys, with it for another study only, or with another permission", async () => {
      const stranger = await managementToken(t, "stranger");
      const elsewhere = await researcher(t, "covid", "manage-surveys");
      const otherRight = await researcher(t, "flu", "edit-participant-data");
      for (const [method, path] of operations("flu")) {
        for (const auth of [stranger, elsewhere.token, otherRight.token]) {
          const res = await call(method, path, auth);
          expect(res.status, `${method} ${path}`).toBe(403);
          expect((await res.json()).error).toMatch(/missing permission "[^"]+(" or "manage-surveys)?" for study "flu"/);
        }
      }
      // nothing changed: one version, still published, one audit entry
      const [version] = await t.database.db.select().from(surveyVersions);
      expect(version?.unpublishedAt).toBeNull();
      expect(await t.database.db.select().from(surveyVersions)).toHaveLength(1);
      expect(await t.database.db.select().from(auditLog)).toHaveLength(1);
    });

    it("403 before 404: a researcher without rights learns nothing about an unknown study", async () => {
      const res = await get(surveys("nope"));
      expect(res.status).toBe(403);
    });

    it("a wildcard permission covers every study", async () => {
      const wildcard = await researcher(t, "*", "manage-surveys");
      expect((await get(surveys("flu"), wildcard.token)).status).toBe(200);
      expect((await postJson(t, surveys("covid"), caseSurvey("weekly"), wildcard.token)).status).toBe(201);
    });

    it("documents every operation with management security", async () => {
      const doc = await (await t.app.request("/openapi.json")).json();
      for (const [method, path] of [
        ["post", "/v1/studies/{studyKey}/surveys"],
        ["get", "/v1/studies/{studyKey}/surveys"],
        ["get", "/v1/studies/{studyKey}/surveys/{surveyKey}/versions"],
        ["get", "/v1/studies/{studyKey}/surveys/{surveyKey}/versions/{versionId}"],
        ["post", "/v1/studies/{studyKey}/surveys/{surveyKey}/unpublish"],
        ["post", "/v1/studies/{studyKey}/surveys/{surveyKey}"],
        ["delete", "/v1/studies/{studyKey}/surveys/{surveyKey}/versions/{versionId}"],
      ] as const) {
        const operation = doc.paths[path]?.[method];
        expect(operation, `${method} ${path}`).toBeDefined();
        expect(operation.security).toEqual([{ managementBearer: [] }, { serviceApiKey: [] }]);
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["401", "403", "404"]));
      }
      expect(Object.keys(doc.paths["/v1/studies/{studyKey}/surveys"].post.responses).sort()).toEqual([
        "201",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
      ]);
    });
  });
});
