import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, dailyExportConfigs } from "@studyflow/db";
import { startDailyExports } from "@studyflow/domain/exports";
import { systemClock } from "@studyflow/domain/foundation";
import { eq } from "drizzle-orm";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("daily export settings (PUT/GET /v1/studies/{studyKey}/daily-export-config)", () => {
  let t: TestApp;
  let admin: string;
  let reader: { subject: string; token: string };
  const path = (study = "flu-watch") => `/v1/studies/${study}/daily-export-config`;
  const get = (token?: string, study?: string) => t.app.request(path(study), { headers: token ? bearer(token) : {} });
  const put = (body: unknown, token?: string, study?: string, contentType = "application/json") =>
    t.app.request(path(study), {
      method: "PUT",
      headers: { ...(token ? bearer(token) : {}), "Content-Type": contentType },
      body: JSON.stringify(body),
    });
  const stored = () => t.database.db.select().from(dailyExportConfigs);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "other" });
    admin = await managementToken(t, "root", true);
    reader = await researcher(t, "flu-watch", "get-responses");
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("weekly"));
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("intake"));
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers null before a study asks for daily exports", async () => {
    const res = await get(reader.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ config: null });
  });

  it("stores the chosen surveys with CASE's export defaults, audits it, and the schedule then exports them", async () => {
    const res = await put({ surveyKeys: ["weekly", "intake", "weekly"] }, reader.token);
    expect(res.status).toBe(200);
    const { config } = (await res.json()) as { config: Record<string, unknown> };
    expect(config).toMatchObject({
      surveyKeys: ["weekly", "intake"],
      enabled: true,
      options: {
        format: "wide",
        questionOptionSep: "-",
        shortKeys: false,
        extraContextColumns: [],
        includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
        gzip: false,
      },
      updatedBy: reader.subject,
    });
    expect(await (await get(reader.token)).json()).toEqual({ config });
    const audited = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "daily-export.update"));
    expect(audited).toEqual([
      expect.objectContaining({
        studyKey: "flu-watch",
        actor: reader.subject,
        details: expect.objectContaining({ surveyKeys: ["weekly", "intake"] }),
      }),
    ]);

    const started = await startDailyExports(t.database.db, {
      clock: systemClock,
      now: Date.UTC(2026, 10, 26, 1),
      queue: () => Promise.resolve(),
    });
    expect(
      started
        .filter((one) => one.studyKey === "flu-watch")
        .map((one) => one.surveyKey)
        .sort(),
    ).toEqual(["intake", "weekly"]);
  });

  it("changes options and stops with enabled: false", async () => {
    const res = await put({ surveyKeys: ["weekly"], format: "long", gzip: true, enabled: false }, admin);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      config: { surveyKeys: ["weekly"], enabled: false, options: { format: "long", gzip: true } },
    });
    const [row] = await stored();
    expect(row).toMatchObject({ enabled: false, surveyKeys: ["weekly"] });
  });

  it("refuses bad input with a 400 naming it and changes nothing", async () => {
    const before = await stored();
    for (const [body, message] of [
      [{ surveyKeys: ["nope"] }, 'surveyKeys.0: no survey "nope" in study "flu-watch"'],
      [{ surveyKeys: ["weekly"], format: "xlsx" }, 'format must be "wide", "long" or "json"'],
      [{ surveyKeys: "weekly" }, "surveyKeys"],
      [{}, "surveyKeys"],
    ] as const) {
      const res = await put(body, admin);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(message);
    }
    expect(await stored()).toEqual(before);
  });

  it("needs a token, get-responses on the study, and a study that exists", async () => {
    expect((await get()).status).toBe(401);
    expect((await put({ surveyKeys: ["weekly"] })).status).toBe(401);
    const otherRight = await researcher(t, "flu-watch", "get-reports");
    expect((await get(otherRight.token)).status).toBe(403);
    expect((await put({ surveyKeys: ["weekly"] }, otherRight.token)).status).toBe(403);
    // a right on one study is no right on another
    expect((await get(reader.token, "other")).status).toBe(403);
    expect((await put({ surveyKeys: [] }, reader.token, "other")).status).toBe(403);
    expect((await get(admin, "absent")).status).toBe(404);
    expect((await put({ surveyKeys: [] }, admin, "absent")).status).toBe(404);
  });
});
