import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studies } from "@studyflow/db";
import { grantPermission } from "@studyflow/domain/study-setup";
import {
  bearer,
  call,
  managementToken,
  onEvent,
  participantUser,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("studies: GET /v1/studies, GET and PATCH /v1/studies/{studyKey}", () => {
  let t: TestApp;
  let admin: string;
  let editor: { subject: string; token: string };
  const get = (path: string, token: string) => t.app.request(path, { headers: bearer(token) });
  const patch = (study: string, body: unknown, token = editor.token) =>
    postJson(t, `/v1/studies/${study}`, body, token, "PATCH");
  const auditOf = async (studyKey: string) =>
    t.database.db.select().from(auditLog).where(eq(auditLog.studyKey, studyKey)).orderBy(auditLog.id);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch", rules: [onEvent("ENTER", call("UPDATE_FLAG", str("kit"), str("sent")))] });
    await setupStudy(t, { key: "sleep-study", status: "inactive" });
    await setupStudy(t, { key: "diet-study" });
    admin = await managementToken(t, "root", true);
    editor = await researcher(t, "flu-watch", "update-study-props");
  });
  afterAll(async () => {
    await t.close();
  });

  describe("GET /v1/studies", () => {
    it("shows an admin every study with status, props, settings and current rules version, never the secret", async () => {
      const res = await get("/v1/studies", admin);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { studies: { key: string; currentRulesVersion: number | null }[] };
      expect(body.studies.map((s) => s.key)).toEqual(["diet-study", "flu-watch", "sleep-study"]);
      const flu = body.studies[1];
      expect(flu).toEqual({
        key: "flu-watch",
        status: "active",
        trackAccount: false,
        props: { name: [], description: [], tags: [], startDate: 0, endDate: 0, systemDefaultStudy: false },
        configs: { participantFileUploadRule: null, idMappingMethod: "hmac-sha256", trackAccount: false },
        stats: { participantCount: 0, tempParticipantCount: 0, responseCount: 0 },
        rules: null,
        notificationSubscriptions: null,
        config: { strictRules: false, timeZone: "UTC", unknownSurveyVersion: "record" },
        currentRulesVersion: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(body.studies[0]!.currentRulesVersion).toBeNull();
      expect(JSON.stringify(body)).not.toContain("secret");
    });

    it("shows anyone else the studies they hold any permission for, all with a * grant, none without", async () => {
      const visible = async (token: string) =>
        ((await (await get("/v1/studies", token)).json()).studies as { key: string }[]).map((s) => s.key);
      expect(await visible(editor.token)).toEqual(["flu-watch"]);
      const both = await researcher(t, "sleep-study", "read-audit-log");
      await grantPermission(t.database.db, both.subject, "flu-watch", "manage-rules");
      expect(await visible(both.token)).toEqual(["flu-watch", "sleep-study"]);
      const everywhere = await researcher(t, "*", "read-rule-failures");
      expect(await visible(everywhere.token)).toEqual(["diet-study", "flu-watch", "sleep-study"]);
      expect(await visible(await managementToken(t, "nobody"))).toEqual([]);
    });

    it("401 without a token", async () => {
      const res = await t.app.request("/v1/studies");
      expect(res.status).toBe(401);
      expect((await res.json()).error).toMatch(/Authorization/);
    });
  });

  describe("GET /v1/studies/{studyKey}", () => {
    it("answers with any permission for the study", async () => {
      const reader = await researcher(t, "flu-watch", "manage-code-lists");
      const res = await get("/v1/studies/flu-watch", reader.token);
      expect(res.status).toBe(200);
      expect((await res.json()).study).toMatchObject({ key: "flu-watch", status: "active", currentRulesVersion: 1 });
    });

    it("401 without a token, 403 with rights for another study only, 404 for an unknown study", async () => {
      expect((await t.app.request("/v1/studies/flu-watch")).status).toBe(401);
      const other = await researcher(t, "diet-study", "update-study-props");
      const forbidden = await get("/v1/studies/flu-watch", other.token);
      expect(forbidden.status).toBe(403);
      expect(await forbidden.json()).toEqual({ error: 'no permission for study "flu-watch"' });
      // without rights, an unknown study looks like any other: no telling what exists
      expect((await get("/v1/studies/nope", other.token)).status).toBe(403);
      const missing = await get("/v1/studies/nope", admin);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    });
  });

  describe("PATCH /v1/studies/{studyKey}", () => {
    it("sets names, descriptions, tags, start date and time zone, and records who changed what", async () => {
      const res = await patch("flu-watch", {
        name: { en: "Flu watch", de: "Grippe-Radar" },
        description: { en: "Weekly symptoms; one test kit per household." },
        tags: [" influenza ", "cohort"],
        startDate: "2026-11-01",
        timeZone: "Europe/Berlin",
      });
      expect(res.status).toBe(200);
      const { study } = await res.json();
      expect(study.props).toEqual({
        name: { en: "Flu watch", de: "Grippe-Radar" },
        description: { en: "Weekly symptoms; one test kit per household." },
        tags: ["influenza", "cohort"],
        startDate: "2026-11-01",
      });
      expect(study.config).toMatchObject({ timeZone: "Europe/Berlin", strictRules: false });

      const entries = await auditOf("flu-watch");
      expect(entries.map((e) => [e.actor, e.action])).toEqual([
        ["test", "rules.set"],
        [editor.subject, "study.props.update"],
        [editor.subject, "study.config.update"],
      ]);
      expect(entries[1]!.details).toEqual({
        name: { from: null, to: { en: "Flu watch", de: "Grippe-Radar" } },
        description: { from: null, to: { en: "Weekly symptoms; one test kit per household." } },
        tags: { from: null, to: ["influenza", "cohort"] },
        startDate: { from: null, to: "2026-11-01" },
      });
      expect(entries[2]!.details).toEqual({ timeZone: { from: null, to: "Europe/Berlin" } });
    });

    it("replaces a whole map, keeps absent fields, removes with null, and records nothing for no change", async () => {
      await patch("flu-watch", { name: { en: "Flu watch", de: "Grippe-Radar" }, tags: ["influenza"] });
      const before = (await auditOf("flu-watch")).length;
      const res = await patch("flu-watch", { name: { fr: "Veille grippe" }, tags: null, timeZone: null });
      const { study } = await res.json();
      expect(study.props.name).toEqual({ fr: "Veille grippe" });
      expect(study.props.tags).toEqual([]);
      expect(study.props.startDate).toBe("2026-11-01");
      expect(study.config.timeZone).toBe("UTC");
      const after = await auditOf("flu-watch");
      expect(after.slice(before).map((e) => e.action)).toEqual(["study.props.update", "study.config.update"]);

      await patch("flu-watch", { name: { fr: "Veille grippe", de: "Grippe-Radar", en: "Flu watch" } });
      const changed = await auditOf("flu-watch");
      // the same names in another order: jsonb keeps its own key order, which is no change
      const same = await patch("flu-watch", { name: { en: "Flu watch", fr: "Veille grippe", de: "Grippe-Radar" } });
      expect(same.status).toBe(200);
      expect(await auditOf("flu-watch")).toHaveLength(changed.length);
      expect(changed).toHaveLength(after.length + 1);
      await patch("flu-watch", { name: { fr: "Veille grippe" } });
    });

    it("inactive closes the study to participant events (409) until it is active again", async () => {
      const user = await participantUser(t);
      const profileID = user.profiles[0]!.id;
      const enter = () => postJson(t, "/v1/study-service/events/flu-watch/enter", { profileID }, user.token);

      const off = await patch("flu-watch", { status: "inactive" });
      expect((await off.json()).study.status).toBe("inactive");
      const refused = await enter();
      expect(refused.status).toBe(409);
      expect(await refused.json()).toEqual({ error: 'study "flu-watch" is not active' });

      await patch("flu-watch", { status: "active", strictRules: true });
      expect((await enter()).status).toBe(200);
      const statusChanges = (await auditOf("flu-watch")).filter((e) => e.action === "study.status.update");
      expect(statusChanges.map((e) => e.details)).toEqual([
        { status: { from: "active", to: "inactive" } },
        { status: { from: "inactive", to: "active" } },
      ]);
      await patch("flu-watch", { strictRules: false });
    });

    it("sets what an unknown survey version gets, audited as a config change", async () => {
      const reject = await patch("flu-watch", { unknownSurveyVersion: "reject" });
      expect((await reject.json()).study.config.unknownSurveyVersion).toBe("reject");
      await patch("flu-watch", { unknownSurveyVersion: "record" });
      const changes = (await auditOf("flu-watch"))
        .filter((e) => e.action === "study.config.update")
        .map((e) => e.details)
        .filter((details) => "unknownSurveyVersion" in details);
      expect(changes).toEqual([
        { unknownSurveyVersion: { from: null, to: "reject" } },
        { unknownSurveyVersion: { from: "reject", to: "record" } },
      ]);
    });

    it("sets account tracking here and through PUT …/track-account, both audited", async () => {
      const on = await patch("flu-watch", { trackAccount: true });
      expect((await on.json()).study.trackAccount).toBe(true);
      const off = await postJson(
        t,
        "/v1/studies/flu-watch/track-account",
        { trackAccount: false },
        editor.token,
        "PUT",
      );
      expect(await off.json()).toEqual({ message: 'account tracking is off for study "flu-watch"' });
      const entries = (await auditOf("flu-watch")).filter((e) => e.action === "study.track-account.update");
      expect(entries.map((e) => [e.actor, e.details])).toEqual([
        [editor.subject, { trackAccount: { from: false, to: true } }],
        [editor.subject, { trackAccount: { from: true, to: false } }],
      ]);
    });

    it("400 naming the field for every bad value, changing nothing", async () => {
      const [before] = await t.database.db.select().from(studies).where(eq(studies.key, "flu-watch"));
      const cases: [unknown, RegExp][] = [
        [{}, /body: give at least one field to change/],
        [{ title: "Flu" }, /body: Unrecognized key: "title"/],
        [{ name: { english: "Flu" } }, /body\.name\.english: is not a language code such as en or de-CH/],
        [{ name: { en: "  " } }, /body\.name\.en: must not be empty/],
        ['{"name":{"__proto__":"Flu"}}', /body\.name\.__proto__: is not a language code/],
        [{ name: { en: "x".repeat(201) } }, /body\.name\.en: must be at most 200 characters/],
        [{ name: "Flu watch" }, /body\.name: /],
        [{ description: { de: "x".repeat(5_001) } }, /body\.description\.de: must be at most 5000 characters/],
        [{ tags: ["a", ""] }, /body\.tags\.1: must not be empty/],
        [{ tags: ["a", "b", "a"] }, /body\.tags\.2: "a" is given twice/],
        [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, /body\.tags: at most 50 tags/],
        [{ startDate: "2026-02-30" }, /body\.startDate: must be a date YYYY-MM-DD/],
        [{ startDate: "1 Nov 2026" }, /body\.startDate: must be a date YYYY-MM-DD/],
        [{ timeZone: "Mars/Olympus" }, /body\.timeZone: unknown time zone/],
        [{ status: "paused" }, /body\.status: /],
        [{ strictRules: "yes" }, /body\.strictRules: /],
        [{ unknownSurveyVersion: "ignore" }, /body\.unknownSurveyVersion: /],
        [{ trackAccount: 1 }, /body\.trackAccount: /],
      ];
      for (const [body, message] of cases) {
        const res = await patch("flu-watch", body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect((await res.json()).error).toMatch(message);
      }
      const notJson = await postJson(t, "/v1/studies/flu-watch", "{", editor.token, "PATCH");
      expect(notJson.status).toBe(400);
      const [after] = await t.database.db.select().from(studies).where(eq(studies.key, "flu-watch"));
      expect(after).toEqual(before);
    });

    it("401 without a token, 403 without update-study-props or with it for another study, 404 unknown study", async () => {
      expect((await patch("flu-watch", { tags: ["x"] }, "")).status).toBe(401);
      const reader = await researcher(t, "flu-watch", "manage-rules");
      const forbidden = await patch("flu-watch", { tags: ["x"] }, reader.token);
      expect(forbidden.status).toBe(403);
      expect(await forbidden.json()).toEqual({
        error: 'missing permission "update-study-props" for study "flu-watch"',
      });
      const elsewhere = await researcher(t, "diet-study", "update-study-props");
      expect((await patch("flu-watch", { tags: ["x"] }, elsewhere.token)).status).toBe(403);
      const missing = await patch("nope", { tags: ["x"] }, admin);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
      const [study] = await t.database.db.select().from(studies).where(eq(studies.key, "flu-watch"));
      expect(study!.props.tags).toBeUndefined();
    });
  });
});
