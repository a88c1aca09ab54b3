import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, researcherSubscriptions } from "@studyflow/db";
import { bearer, managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

interface SubscriptionJson {
  id: string;
  messageType: string;
  email: string;
  createdBy: string;
  createdAt: string;
}

describe("researcher subscriptions: /v1/studies/{studyKey}/subscriptions", () => {
  let t: TestApp;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = (studyKey = "flu-watch") => `/v1/studies/${studyKey}/subscriptions`;
  const add = (body: unknown, token = manager.token, studyKey = "flu-watch") =>
    postJson(t, base(studyKey), body, token);
  const list = (token = manager.token, studyKey = "flu-watch") =>
    t.app.request(base(studyKey), { headers: bearer(token) });
  const remove = (id: string, token = manager.token, studyKey = "flu-watch") =>
    t.app.request(`${base(studyKey)}/${id}`, { method: "DELETE", headers: bearer(token) });
  const stored = () =>
    t.database.db
      .select({
        studyKey: researcherSubscriptions.studyKey,
        messageType: researcherSubscriptions.messageType,
        email: researcherSubscriptions.email,
      })
      .from(researcherSubscriptions)
      .orderBy(researcherSubscriptions.id);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "diet-study" });
    manager = await researcher(t, "flu-watch", "manage-subscriptions");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("adds (201), lists, re-adds (200, unchanged), removes (204): each change audited", async () => {
    const created = await add({ messageType: "symptom-report", email: "  Dr.Lena@Example.ORG " });
    expect(created.status).toBe(201);
    const { subscription } = (await created.json()) as { subscription: SubscriptionJson };
    expect(subscription).toEqual({
      id: expect.stringMatching(/^\d+$/),
      messageType: "symptom-report",
      email: "dr.lena@example.org",
      createdBy: manager.subject,
      createdAt: expect.any(String),
    });
    expect((await add({ messageType: "*", email: "team@example.org" })).status).toBe(201);

    const again = await add({ messageType: "symptom-report", email: "DR.LENA@example.org" });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { subscription: SubscriptionJson }).subscription).toEqual(subscription);

    const listed = await list();
    expect(listed.status).toBe(200);
    const { subscriptions } = (await listed.json()) as { subscriptions: SubscriptionJson[] };
    expect(subscriptions.map((s) => `${s.messageType} ${s.email}`)).toEqual([
      "* team@example.org",
      "symptom-report dr.lena@example.org",
    ]);

    expect((await remove(subscription.id)).status).toBe(204);
    expect(await stored()).toEqual([{ studyKey: "flu-watch", messageType: "*", email: "team@example.org" }]);
    const gone = await remove(subscription.id);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: `subscription ${subscription.id} not found in study "flu-watch"` });

    const audit = await t.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.studyKey, "flu-watch"))
      .orderBy(auditLog.id);
    expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
      [manager.subject, "subscription.add", { messageType: "symptom-report", email: "dr.lena@example.org" }],
      [manager.subject, "subscription.add", { messageType: "*", email: "team@example.org" }],
      [manager.subject, "subscription.remove", { messageType: "symptom-report", email: "dr.lena@example.org" }],
    ]);
    expect(audit[0]!.target).toBe(subscription.id);
  });

  it("400 naming the field for a bad message type, address, body or id; nothing stored", async () => {
    const before = await stored();
    const cases: [unknown, RegExp][] = [
      [{ messageType: "symptom-report" }, /^body\.email: /],
      [{ email: "a@example.org" }, /^body\.messageType: /],
      [{ messageType: "", email: "a@example.org" }, /^body\.messageType: messageType must not be empty$/],
      [{ messageType: " x", email: "a@example.org" }, /^body\.messageType: messageType must not start or end/],
      [{ messageType: "a\nb", email: "a@example.org" }, /^body\.messageType: messageType must not contain control/],
      [{ messageType: "x".repeat(201), email: "a@example.org" }, /^body\.messageType: messageType is longer than 200/],
      [{ messageType: "x", email: "not an address" }, /^body\.email: email must be an e-mail address/],
      [{ messageType: "x", email: "a@example.org, b@example.org" }, /^body\.email: email must be an e-mail/],
      [{ messageType: "x", email: `${"a".repeat(250)}@example.org` }, /^body\.email: email is longer than 254/],
      [{ messageType: "x", email: "a@example.org", note: 1 }, /^body: Unrecognized key: "note"/],
      [{ messageType: 7, email: "a@example.org" }, /^body\.messageType: /],
    ];
    for (const [body, message] of cases) {
      const res = await add(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(message);
    }
    for (const id of ["abc", "0", "-1", "1.5", "12345678901234567"]) {
      const res = await remove(id);
      expect(res.status, id).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^param\.id: id must be a subscription id/);
    }
    expect(await stored()).toEqual(before);
  });

  it("401 without a token, 403 without manage-subscriptions or with it for another study, 404 unknown study or id", async () => {
    const [existing] = await t.database.db
      .select({ id: researcherSubscriptions.id })
      .from(researcherSubscriptions)
      .where(eq(researcherSubscriptions.studyKey, "flu-watch"));
    const id = String(existing!.id);
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["list", (token, studyKey) => list(token, studyKey)],
      ["add", (token, studyKey) => add({ messageType: "x", email: "intruder@example.org" }, token, studyKey)],
      ["remove", (token, studyKey) => remove(id, token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "manage-study-variables");
    const otherStudy = await researcher(t, "diet-study", "manage-subscriptions");
    for (const [name, request] of routes) {
      const unauthenticated = await request("", "flu-watch");
      expect(unauthenticated.status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect(await forbidden.json()).toEqual({
        error: 'missing permission "manage-subscriptions" for study "flu-watch"',
      });
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    // a subscription of one study is not reachable through another
    expect((await remove(id, otherStudy.token, "diet-study")).status).toBe(404);
    expect((await remove("999999", manager.token)).status).toBe(404);
    expect(await stored()).toEqual([{ studyKey: "flu-watch", messageType: "*", email: "team@example.org" }]);
  });
});
