import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyTaskRetention } from "@studyflow/db";
import { bearer, managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const url = (study: string) => `/v1/studies/${study}/task-retention`;

describe("a study's retention of finished tasks", () => {
  let t: TestApp;
  let admin: string;
  let editor: { subject: string; token: string };

  const get = (study: string, token?: string) => t.app.request(url(study), { headers: token ? bearer(token) : {} });
  const put = (study: string, body: unknown, token?: string) => postJson(t, url(study), body, token, "PUT");
  const auditOf = async (study: string) =>
    (await t.database.db.select().from(auditLog).where(eq(auditLog.studyKey, study)).orderBy(auditLog.id)).filter(
      (entry) => entry.action === "task-retention.update",
    );

  beforeAll(async () => {
    // The deployment's defaults, as the workers read them: "off" keeps ticks forever.
    t = await createTestApp({ env: { TASK_RETENTION_DAYS: "14", TIMER_TASK_RETENTION_DAYS: "off" } });
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "other" });
    admin = await managementToken(t, "root", true);
    editor = await researcher(t, "flu", "update-study-props");
  });
  afterAll(async () => {
    await t.close();
  });

  it("shows the defaults while the study sets none", async () => {
    const res = await get("flu", editor.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      taskRetention: {
        studyKey: "flu",
        days: null,
        timerDays: null,
        effectiveDays: 14,
        effectiveTimerDays: 0,
        defaultDays: 14,
        defaultTimerDays: 0,
        updatedBy: null,
        updatedAt: null,
      },
    });
  });

  it("sets the study's own days, 0 to keep forever, null back to the default, auditing each real change", async () => {
    const set = await put("flu", { days: 90, timerDays: 2 }, editor.token);
    expect(set.status).toBe(200);
    expect((await set.json()).taskRetention).toMatchObject({
      days: 90,
      timerDays: 2,
      effectiveDays: 90,
      effectiveTimerDays: 2,
      defaultDays: 14,
      updatedBy: editor.subject,
    });
    // the same value again changes nothing and records nothing
    expect((await put("flu", { days: 90 }, editor.token)).status).toBe(200);
    const forever = await (await put("flu", { days: 0 }, admin)).json();
    expect(forever.taskRetention).toMatchObject({ days: 0, effectiveDays: 0, timerDays: 2 });
    const reset = await (await put("flu", { days: null, timerDays: null }, admin)).json();
    expect(reset.taskRetention).toMatchObject({
      days: null,
      timerDays: null,
      effectiveDays: 14,
      effectiveTimerDays: 0,
    });
    expect((await (await get("flu", admin)).json()).taskRetention).toEqual(reset.taskRetention);

    expect((await auditOf("flu")).map((entry) => [entry.actor, entry.details])).toEqual([
      [editor.subject, { days: { from: null, to: 90 }, timerDays: { from: null, to: 2 } }],
      ["root", { days: { from: 90, to: 0 } }],
      ["root", { days: { from: 0, to: null }, timerDays: { from: 2, to: null } }],
    ]);
    expect(await auditOf("other")).toEqual([]);
  });

  it("answers every bad change with a 400 naming the problem, and changes nothing", async () => {
    const before = await t.database.db.select().from(studyTaskRetention);
    const cases: [unknown, RegExp][] = [
      [{}, /give days, timerDays or both/],
      [{ days: -1 }, /days must be a whole number of days from 0 \(keep forever\) to 3650/],
      [{ days: 3_651 }, /days must be a whole number/],
      [{ timerDays: 1.5 }, /timerDays must be a whole number/],
      [{ days: "30" }, /days must be a whole number/],
      [{ days: 30, keep: true }, /keep/],
      [[30], /./],
      ["30", /./],
    ];
    for (const [body, message] of cases) {
      const res = await put("flu", body, admin);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const answer = (await res.json()) as { error: string };
      expect(Object.keys(answer)).toEqual(["error"]);
      expect(answer.error, JSON.stringify(body)).toMatch(message);
    }
    expect(await t.database.db.select().from(studyTaskRetention)).toEqual(before);
  });

  it("401 without a token, 403 without the right on the study, 404 for an unknown study", async () => {
    const unauthenticated = await get("flu");
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toEqual({ error: "missing Authorization header" });
    expect((await put("flu", { days: 1 })).status).toBe(401);

    // Reading needs any permission for the study; changing needs update-study-props.
    const reader = await researcher(t, "flu", "get-responses");
    expect((await get("flu", reader.token)).status).toBe(200);
    const refused = await put("flu", { days: 1 }, reader.token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'missing permission "update-study-props" for study "flu"' });
    const elsewhere = await researcher(t, "other", "update-study-props");
    expect((await get("flu", elsewhere.token)).status).toBe(403);
    expect((await put("flu", { days: 1 }, elsewhere.token)).status).toBe(403);
    expect(await auditOf("flu")).toHaveLength(3);

    for (const res of [await get("nope", admin), await put("nope", { days: 1 }, admin)]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'study "nope" not found' });
    }
  });
});
