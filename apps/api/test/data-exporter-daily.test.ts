import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { surveyResponses, tasks } from "@studyflow/db";
import { setDailyExportConfig, startDailyExports } from "@studyflow/domain/exports";
import { HEADER_PART, createFileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { eq } from "drizzle-orm";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const DAY_START = 1_779_926_400; // 2026-05-28T00:00:00Z
const DAY = "2026-05-28";

describe("data-exporter daily exports (CASE)", () => {
  let t: TestApp;
  let admin: string;
  let reader: { subject: string; token: string };
  const base = "/v1/studies/flu-watch/data-exporter/responses/daily-exports";
  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "other" });
    admin = await managementToken(t, "root", true);
    reader = await researcher(t, "flu-watch", "get-responses");
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("weekly"));
    await uploadSurvey(t, "flu-watch", admin, caseSurvey("intake"));
    const response = caseResponse("weekly", undefined);
    for (const key of ["weekly", "intake"]) {
      await t.database.db.insert(surveyResponses).values({
        studyKey: "flu-watch",
        participantId: "p1",
        key,
        arrivedAt: DAY_START + 3_600,
        responses: response.responses,
      });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it("lists nothing before the first daily export", async () => {
    const res = await get(base, reader.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ dailyExports: [] });
  });

  it("lists a day's files under CASE's names and streams one by its base64 name", async () => {
    const options = {
      format: "long" as const,
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
      gzip: false,
    };
    await setDailyExportConfig(
      t.database.db,
      "flu-watch",
      { surveyKeys: ["weekly", "intake"], options, enabled: true },
      "root",
      { clock: systemClock },
    );
    const started = await startDailyExports(t.database.db, {
      clock: systemClock,
      now: (DAY_START + 86_400 + 60) * 1000,
      queue: async () => {},
    });
    expect(started.map((s) => s.surveyKey).sort()).toEqual(["intake", "weekly"]);
    // a worker's finalisation, in short: the file complete, the task completed
    const store = createFileStore(t.database.db);
    for (const { task, surveyKey } of started) {
      await t.database.db.transaction(async (tx) => {
        const file = await store.create(tx, {
          studyKey: "flu-watch",
          taskId: task!.id,
          name: `${surveyKey}_long_20260529T000100Z.csv`,
          contentType: "text/csv",
          gzip: false,
        });
        await store.writePart(tx, file, HEADER_PART, `${surveyKey} rows\n`, { rows: 0 });
        await store.complete(tx, file.id, 1);
        await tx.update(tasks).set({ status: "completed" }).where(eq(tasks.id, task!.id));
      });
    }
    const res = await get(`${base}?`, reader.token);
    expect(res.status).toBe(200);
    const { dailyExports } = (await res.json()) as { dailyExports: string[] };
    expect([...dailyExports].sort()).toEqual([
      `${DAY}##responses##intake##long.csv`,
      `${DAY}##responses##weekly##long.csv`,
    ]);

    const name = `${DAY}##responses##weekly##long.csv`;
    // case-admin sends btoa(name): the standard alphabet; the URL-safe one works too
    for (const id of [btoa(name), Buffer.from(name).toString("base64url")]) {
      const file = await get(`${base}/${encodeURIComponent(id)}`, reader.token);
      expect(file.status).toBe(200);
      expect(file.headers.get("Content-Type")).toBe("text/csv");
      expect(file.headers.get("Content-Disposition")).toBe("attachment; filename=weekly_long_20260529T000100Z.csv");
      expect(await file.text()).toBe("weekly rows\n");
    }
  });

  it("404 for a name the study does not have (another study's included), 400 for an id that is not base64", async () => {
    const missing = await get(`${base}/${btoa(`${DAY}##responses##daily##long.csv`)}`, reader.token);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toBe(`file "${DAY}##responses##daily##long.csv" does not exist`);
    const elsewhere = await get(
      `/v1/studies/other/data-exporter/responses/daily-exports/${btoa(`${DAY}##responses##weekly##long.csv`)}`,
      admin,
    );
    expect(elsewhere.status).toBe(404);
    const bad = await get(`${base}/${encodeURIComponent("%%%")}`, reader.token);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toBe("exportID: not a base64-encoded file name");
  });

  it("401 without a token, 403 without get-responses, 404 for an unknown study", async () => {
    expect((await get(base)).status).toBe(401);
    const confidential = await researcher(t, "flu-watch", "get-confidential-responses");
    expect((await get(base, confidential.token)).status).toBe(403);
    expect((await get(`${base}/${btoa("x")}`, confidential.token)).status).toBe(403);
    expect((await get(base.replace("flu-watch", "other"), reader.token)).status).toBe(403);
    expect((await get("/v1/studies/nope/data-exporter/responses/daily-exports", admin)).status).toBe(404);
  });
});
