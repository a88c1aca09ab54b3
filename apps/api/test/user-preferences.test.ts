import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "@studyflow/db";
import { createAccountToken } from "@studyflow/domain/participant-accounts";
import { bearer, caseRequest as caseJsonRequest, participantUser, userRow } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NO_SMS = {
  error: "phone numbers are not supported: this studyflow deployment has no SMS gateway to verify them",
};

/** A text/plain body, as CASE participant apps send JSON. */
const caseRequest = (t: TestApp, method: string, path: string, body: unknown, token?: string) =>
  caseJsonRequest(t, method, path, body, token, {
    // each request from its own client address, so the per-address limit is the test's to fill
    "x-forwarded-for": `10.0.0.1, 198.51.100.${Math.floor(Math.random() * 250)}`,
  });

describe("/v1/user: contact preferences, newsletter, phone", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("PUT /v1/user/contact-preferences", () => {
    it("sets the newsletter flag and toggles the weekly subscription as CASE apps ask; answers the user", async () => {
      const user = await participantUser(t);
      const first = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: true, toggleWeeklySubscription: true },
        user.token,
      );
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({
        message: "contact preferences updated",
        user: {
          id: user.user.id,
          contactPreferences: {
            subscribedToNewsletter: true,
            subscribedToWeekly: true,
            sendNewsletterTo: [user.user.id],
          },
        },
      });
      // Go-style keys in another case match too
      const second = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { SubscribedToNewsletter: true, ToggleWeeklySubscription: true },
        user.token,
      );
      expect(second.status).toBe(200);
      expect(await userRow(t, user.user.id)).toMatchObject({ subscribedToNewsletter: true, subscribedToWeekly: false });
      const third = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: false, toggleWeeklySubscription: false },
        user.token,
      );
      expect(third.status).toBe(200);
      expect(await userRow(t, user.user.id)).toMatchObject({
        subscribedToNewsletter: false,
        subscribedToWeekly: false,
      });
    });

    it("sets the weekly flag and day directly; 400 for a day out of range or a wrong type; 401 without token", async () => {
      const user = await participantUser(t);
      const res = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToWeekly: true, receiveWeeklyMessageDayOfWeek: 3 },
        user.token,
      );
      expect(res.status).toBe(200);
      expect(await userRow(t, user.user.id)).toMatchObject({ subscribedToWeekly: true, weeklyMessageDayOfWeek: 3 });
      // Every key absent: nothing changes, the account is answered as it is (was a 500).
      const nothing = await caseRequest(t, "PUT", "/v1/user/contact-preferences", {}, user.token);
      expect(nothing.status).toBe(200);
      expect((await nothing.json()).message).toBe("contact preferences updated");
      expect(await userRow(t, user.user.id)).toMatchObject({ subscribedToWeekly: true, weeklyMessageDayOfWeek: 3 });
      const badDay = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { receiveWeeklyMessageDayOfWeek: 7 },
        user.token,
      );
      expect(badDay.status).toBe(400);
      expect((await badDay.json()).error).toMatch(/body\.receiveWeeklyMessageDayOfWeek/);
      const badType = await caseRequest(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: "yes" },
        user.token,
      );
      expect(badType.status).toBe(400);
      expect((await badType.json()).error).toMatch(/body\.subscribedToNewsletter/);
      expect(
        (await caseRequest(t, "PUT", "/v1/user/contact-preferences", { subscribedToNewsletter: true })).status,
      ).toBe(401);
    });
  });

  describe("POST /v1/unsubscribe-newsletter", () => {
    it("unsubscribes the token's account without a sign-in; the link keeps working", async () => {
      const user = await participantUser(t);
      const other = await participantUser(t);
      await t.database.db.update(users).set({ subscribedToNewsletter: true }).where(eq(users.id, user.user.id));
      await t.database.db.update(users).set({ subscribedToNewsletter: true }).where(eq(users.id, other.user.id));
      const token = await createAccountToken(t.database.db, {
        userId: user.user.id,
        purpose: "unsubscribe-newsletter",
        ttlSeconds: 30 * 86_400,
        now: new Date(NOW),
      });
      for (let click = 0; click < 2; click += 1) {
        const res = await caseRequest(t, "POST", "/v1/unsubscribe-newsletter", { token });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ message: "newsletter unsubscribed" });
      }
      expect((await userRow(t, user.user.id)).subscribedToNewsletter).toBe(false);
      expect((await userRow(t, other.user.id)).subscribedToNewsletter).toBe(true);
    });

    it("401 for unknown, expired and other-purpose tokens; 400 without a token", async () => {
      const user = await participantUser(t);
      await t.database.db.update(users).set({ subscribedToNewsletter: true }).where(eq(users.id, user.user.id));
      const expired = await createAccountToken(t.database.db, {
        userId: user.user.id,
        purpose: "unsubscribe-newsletter",
        ttlSeconds: 60,
        now: new Date(NOW - 3_600_000),
      });
      const otherPurpose = await createAccountToken(t.database.db, {
        userId: user.user.id,
        purpose: "password-reset",
        ttlSeconds: 3_600,
        now: new Date(NOW),
      });
      for (const token of [randomBytes(32).toString("base64url"), expired, otherPurpose, "short"]) {
        const res = await caseRequest(t, "POST", "/v1/unsubscribe-newsletter", { token });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: "invalid or expired unsubscribe token" });
      }
      expect((await userRow(t, user.user.id)).subscribedToNewsletter).toBe(true);
      const missing = await caseRequest(t, "POST", "/v1/unsubscribe-newsletter", {});
      expect(missing.status).toBe(400);
      expect((await missing.json()).error).toMatch(/body\.token/);
    });

    it("limits unusable tokens per client address", async () => {
      const send = () =>
        t.app.request("/v1/unsubscribe-newsletter", {
          method: "POST",
          headers: { "content-type": "text/plain", "x-forwarded-for": "10.0.0.1, 203.0.113.77" },
          body: JSON.stringify({ token: randomBytes(32).toString("base64url") }),
        });
      for (let i = 0; i < 20; i += 1) expect((await send()).status).toBe(401);
      const limited = await send();
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).not.toBeNull();
    });
  });

  describe("phone number routes", () => {
    it("answer 409 naming the missing SMS gateway; 401 without a token", async () => {
      const user = await participantUser(t);
      const change = await caseRequest(
        t,
        "POST",
        "/v1/user/change-phone-number",
        { newPhoneNumber: "+31600000000", password: "whatever-it-is" },
        user.token,
      );
      expect(change.status).toBe(409);
      expect(await change.json()).toEqual(NO_SMS);
      const verify = await t.app.request("/v1/user/request-phone-number-verification", { headers: bearer(user.token) });
      expect(verify.status).toBe(409);
      expect(await verify.json()).toEqual(NO_SMS);
      expect((await t.app.request("/v1/user/request-phone-number-verification")).status).toBe(401);
      expect((await caseRequest(t, "POST", "/v1/user/change-phone-number", { newPhoneNumber: "1" })).status).toBe(401);
    });
  });
});
