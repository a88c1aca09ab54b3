import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { studies } from "@studyflow/db";
import { managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("PUT /v1/studies/{studyKey}/track-account", () => {
  let t: TestApp;
  let token: string;
  const put = (study: string, body: unknown, tok?: string) =>
    postJson(t, `/v1/studies/${study}/track-account`, body, tok, "PUT");
  const flag = async () =>
    (await t.database.db.select().from(studies).where(eq(studies.key, "study-a")))[0]?.trackAccount;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    ({ token } = await researcher(t, "study-a", "update-study-props"));
  });
  afterAll(async () => {
    await t.close();
  });

  it("switches the flag on and off and says the resulting value", async () => {
    const on = await put("study-a", { trackAccount: true }, token);
    expect(on.status).toBe(200);
    expect(await on.json()).toEqual({ message: 'account tracking is on for study "study-a"' });
    expect(await flag()).toBe(true);
    const off = await put("study-a", { trackAccount: false }, token);
    expect(await off.json()).toEqual({ message: 'account tracking is off for study "study-a"' });
    expect(await flag()).toBe(false);
  });

  it("an absent field leaves the flag unchanged", async () => {
    await put("study-a", { trackAccount: true }, token);
    const res = await put("study-a", {}, token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'account tracking is on for study "study-a"' });
    expect(await flag()).toBe(true);
  });

  it("400 for a non-boolean, and nothing changes", async () => {
    await put("study-a", { trackAccount: true }, token);
    for (const value of ["false", 0, null]) {
      const res = await put("study-a", { trackAccount: value }, token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/trackAccount must be a boolean/);
    }
    expect(await flag()).toBe(true);
  });

  it("404 for an unknown study", async () => {
    const admin = await managementToken(t, "root", true);
    const res = await put("nope", { trackAccount: true }, admin);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'study "nope" not found' });
  });

  it("401 without a token, 403 without update-study-props", async () => {
    expect((await put("study-a", { trackAccount: false })).status).toBe(401);
    const other = await researcher(t, "study-a", "run-study-action");
    const res = await put("study-a", { trackAccount: false }, other.token);
    expect(res.status).toBe(403);
    expect(await flag()).toBe(true);
  });
});
