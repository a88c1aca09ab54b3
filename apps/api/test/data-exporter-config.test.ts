import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { studies } from "@studyflow/db";
import { addSubscription } from "@studyflow/domain/notifications";
import { unpublishSurvey } from "@studyflow/domain/surveys";
import { bearer, call, managementToken, onEvent, researcher, setupStudy, str } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const rules = [onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes")))];

describe("export-config (CASE)", () => {
  let t: TestApp;
  let admin: string;
  let reader: { subject: string; token: string };

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(Date.parse("2026-11-25T10:00:00Z"));
    await setupStudy(t, {
      key: "flu-watch",
      secret: "flu-watch-secret-0123456789",
      trackAccount: true,
      rules,
    });
    await t.database.db
      .update(studies)
      .set({ props: { name: { en: "Flu watch", de: "Grippe-Radar" }, tags: ["influenza"], startDate: "2026-11-01" } })
      .where(eq(studies.key, "flu-watch"));
    await t.settle();
    await setupStudy(t, { key: "no-rules" });
    admin = await managementToken(t, "root", true);
    reader = await researcher(t, "flu-watch", "read-study-config");
    await addSubscription(t.database.db, "flu-watch", { messageType: "kit-request", email: "Lab@Example.org" }, "root");
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("weekly"));
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("intake"));
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("retired"));
    await unpublishSurvey(
      t.database.db,
      { studyKey: "flu-watch", surveyKey: "retired", actor: "root" },
      {
        clock: () => Date.now(),
      },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  it("exports config, rules and current surveys as CASE's attachment, without the study secret", async () => {
    const res = await get("/v1/studies/flu-watch/export-config?config=true&surveys=true&rules=true", reader.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.headers.get("Content-Disposition")).toBe("attachment; filename=study_config_flu-watch_2026-11-25.json");
    const text = await res.text();
    expect(text).not.toContain("flu-watch-secret");
    const body = JSON.parse(text) as Record<string, any>;
    expect(body.exportedAt).toBe("2026-11-25T10:00:00.000Z");
    expect(body.config).toMatchObject({
      key: "flu-watch",
      status: "active",
      props: {
        name: [
          { code: "de", parts: [{ dtype: "str", str: "Grippe-Radar" }] },
          { code: "en", parts: [{ dtype: "str", str: "Flu watch" }] },
        ],
        tags: [{ label: [{ code: "en", parts: [{ dtype: "str", str: "influenza" }] }] }],
        startDate: Date.parse("2026-11-01T00:00:00Z") / 1000,
      },
      configs: { trackAccount: true, idMappingMethod: "hmac-sha256" },
      notificationSubscriptions: [{ messageType: "kit-request", email: "lab@example.org" }],
      stats: { participantCount: 0, tempParticipantCount: 0, responseCount: 0 },
    });
    expect(body.config).not.toHaveProperty("secretKey");
    expect(body.rules).toMatchObject({ studyKey: "flu-watch", uploadedBy: "", rules, version: 1 });
    expect(typeof body.rules.uploadedAt).toBe("number");
    // the unpublished survey has no current version: left out, as CASE leaves it out
    const surveys = body.surveys as { surveyDefinition: { key: string }; versionId: string; published: unknown }[];
    expect(surveys.map((s) => s.surveyDefinition.key).sort()).toEqual(["intake", "weekly"]);
    for (const survey of surveys) {
      expect(survey.versionId).toMatch(/\S/);
      expect(survey.versionId).not.toBe("client-version");
      expect(typeof survey.published).toBe("number");
    }
  });

  it("includes only what is asked for; a study without rules exports without them", async () => {
    const onlyRules = await (await get("/v1/studies/flu-watch/export-config?rules=true", reader.token)).json();
    expect(Object.keys(onlyRules).sort()).toEqual(["exportedAt", "rules"]);
    const res = await get("/v1/studies/no-rules/export-config?rules=true&config=true", admin);
    expect(res.status).toBe(200);
    expect(Object.keys(await res.json()).sort()).toEqual(["config", "exportedAt"]);
  });

  it("400 when nothing is asked for or a flag is not true/false", async () => {
    for (const query of ["", "?config=false&surveys=false&rules=false"]) {
      const res = await get(`/v1/studies/flu-watch/export-config${query}`, reader.token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe(
        "at least one of the following query parameters must be set: config, surveys, rules",
      );
    }
    const res = await get("/v1/studies/flu-watch/export-config?config=yes", reader.token);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/config/);
  });

  it("401 without a token, 403 without read-study-config, 404 for an unknown study", async () => {
    expect((await get("/v1/studies/flu-watch/export-config?config=true")).status).toBe(401);
    const other = await researcher(t, "flu-watch", "get-responses");
    expect((await get("/v1/studies/flu-watch/export-config?config=true", other.token)).status).toBe(403);
    // a reader of one study is a stranger to another
    expect((await get("/v1/studies/no-rules/export-config?config=true", reader.token)).status).toBe(403);
    expect((await get("/v1/studies/nope/export-config?config=true", admin)).status).toBe(404);
  });
});
