import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantSessions, users } from "@studyflow/db";
import { STRONG_PASSWORD, bearer, caseRequest, participantUser, userRow } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

interface Envelope {
  token: { accessToken: string; refreshToken: string; selectedProfile: string };
  user: { id: string; profiles: { id: string; mainProfile: boolean }[] };
}

describe("the participant's language and tokens (CASE's preferred-language, token/validate, token/revoke)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  async function signedIn(profiles = ["main"]) {
    const created = await participantUser(t, profiles);
    const res = await caseRequest(t, "POST", "/v1/auth/login", {
      email: created.user.email,
      password: STRONG_PASSWORD,
      instanceID: t.config.INSTANCE_ID,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return { ...created, envelope: (await res.json()) as Envelope };
  }

  describe("PUT /v1/user/preferred-language", () => {
    it("stores a language code as case-backend accepts it", async () => {
      const { user, token } = await participantUser(t);
      for (const locale of ["nl", "nl-BE", "es-419"]) {
        const res = await caseRequest(t, "PUT", "/v1/user/preferred-language", { newLocale: locale }, token);
        expect(res.status, locale).toBe(200);
        expect(await res.json()).toEqual({ message: "preferred language updated" });
        expect((await userRow(t, user.id)).preferredLanguage).toBe(locale);
      }
      const shown = await get("/v1/user", token);
      expect(((await shown.json()) as { user: { account: { preferredLanguage: string } } }).user.account).toMatchObject(
        {
          preferredLanguage: "es-419",
        },
      );
    });

    it("refuses what is no language code, and a missing body, with 400 and changes nothing", async () => {
      const { user, token } = await participantUser(t);
      for (const body of [{ newLocale: "NL" }, { newLocale: "dutch" }, { newLocale: "nl-be" }, {}, { newLocale: 5 }]) {
        const res = await caseRequest(t, "PUT", "/v1/user/preferred-language", body, token);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(await res.json()).toHaveProperty("error");
      }
      const empty = await t.app.request("/v1/user/preferred-language", { method: "PUT", headers: bearer(token) });
      expect(empty.status).toBe(400);
      expect((await userRow(t, user.id)).preferredLanguage).toBe("en");
    });

    it("refuses a request without a token or with a revoked one (401)", async () => {
      const anonymous = await caseRequest(t, "PUT", "/v1/user/preferred-language", { newLocale: "nl" });
      expect(anonymous.status).toBe(401);
      const { envelope } = await signedIn();
      const token = envelope.token.accessToken;
      expect((await get("/v1/auth/token/revoke", token)).status).toBe(200);
      const revoked = await caseRequest(t, "PUT", "/v1/user/preferred-language", { newLocale: "nl" }, token);
      expect(revoked.status).toBe(401);
      expect((await userRow(t, envelope.user.id)).preferredLanguage).toBe("en");
    });
  });

  describe("GET /v1/auth/token/validate", () => {
    it("answers the token's infos in case-backend's claim names", async () => {
      const { envelope } = await signedIn();
      await t.database.db.update(users).set({ accountConfirmedAt: new Date() }).where(eq(users.id, envelope.user.id));
      const res = await get("/v1/auth/token/validate", envelope.token.accessToken);
      expect(res.status).toBe(200);
      const { tokenInfos } = (await res.json()) as { tokenInfos: Record<string, unknown> };
      expect(tokenInfos).toMatchObject({
        instance_id: t.config.INSTANCE_ID,
        profile_id: envelope.token.selectedProfile,
        accountConfirmed: true,
        sub: envelope.user.id,
      });
      expect(typeof tokenInfos.session_id).toBe("string");
      expect(typeof tokenInfos.iat).toBe("number");
      expect(tokenInfos.exp as number).toBeGreaterThan(tokenInfos.iat as number);
      // one profile: no other ids, left out as Go's omitempty leaves them
      expect(tokenInfos).not.toHaveProperty("other_profile_ids");
    });

    it("lists the account's other profiles; an unconfirmed account has no accountConfirmed", async () => {
      const { token, user, profiles } = await participantUser(t, ["main", "child"]);
      const res = await get("/v1/auth/token/validate", token);
      expect(res.status).toBe(200);
      const { tokenInfos } = (await res.json()) as { tokenInfos: Record<string, unknown> };
      const main = profiles.find((profile) => profile.mainProfile)!;
      expect(tokenInfos.profile_id).toBe(main.id);
      expect(tokenInfos.other_profile_ids).toEqual(profiles.filter((p) => p.id !== main.id).map((p) => p.id));
      expect(tokenInfos.sub).toBe(user.id);
      // an operator-minted token belongs to no session
      expect(tokenInfos).not.toHaveProperty("session_id");
      expect(tokenInfos).not.toHaveProperty("accountConfirmed");
    });

    it("answers 401 without a token, with a forged one, after logout and after revoke", async () => {
      expect((await get("/v1/auth/token/validate")).status).toBe(401);
      expect((await get("/v1/auth/token/validate", "not.a.token")).status).toBe(401);
      const first = await signedIn();
      expect((await caseRequest(t, "POST", "/v1/auth/logout", {}, first.envelope.token.accessToken)).status).toBe(200);
      const afterLogout = await get("/v1/auth/token/validate", first.envelope.token.accessToken);
      expect(afterLogout.status).toBe(401);
      expect(await afterLogout.json()).toHaveProperty("error");
      const second = await signedIn();
      expect((await get("/v1/auth/token/revoke", second.envelope.token.accessToken)).status).toBe(200);
      expect((await get("/v1/auth/token/validate", second.envelope.token.accessToken)).status).toBe(401);
    });
  });

  describe("GET /v1/auth/token/revoke", () => {
    it("ends every session of the account: no refresh token renews, no access token is taken", async () => {
      const { user } = await signedIn();
      const again = await caseRequest(t, "POST", "/v1/auth/login", {
        email: user.email,
        password: STRONG_PASSWORD,
        instanceID: t.config.INSTANCE_ID,
      });
      const other = (await again.json()) as Envelope;
      const [first] = await t.database.db
        .select()
        .from(participantSessions)
        .where(eq(participantSessions.userId, user.id));
      expect(first).toBeDefined();
      const res = await get("/v1/auth/token/revoke", other.token.accessToken);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ message: "tokens revoked" });
      const sessions = await t.database.db
        .select()
        .from(participantSessions)
        .where(eq(participantSessions.userId, user.id));
      expect(sessions).toHaveLength(2);
      for (const session of sessions) expect(session.revokedReason).toBe("tokens-revoked");
      const renew = await caseRequest(
        t,
        "POST",
        "/v1/auth/token/renew",
        { refreshToken: other.token.refreshToken },
        other.token.accessToken,
      );
      expect(renew.status).toBe(401);
      expect((await get("/v1/user", other.token.accessToken)).status).toBe(401);
      // signing in again works
      const fresh = await signedInAs(user.email);
      expect((await get("/v1/user", fresh.token.accessToken)).status).toBe(200);
    });

    it("answers 401 without a token and with a revoked one", async () => {
      expect((await get("/v1/auth/token/revoke")).status).toBe(401);
      const { envelope } = await signedIn();
      expect((await get("/v1/auth/token/revoke", envelope.token.accessToken)).status).toBe(200);
      const twice = await get("/v1/auth/token/revoke", envelope.token.accessToken);
      expect(twice.status).toBe(401);
      expect(await twice.json()).toHaveProperty("error");
    });

    async function signedInAs(email: string) {
      const res = await caseRequest(t, "POST", "/v1/auth/login", {
        email,
        password: STRONG_PASSWORD,
        instanceID: t.config.INSTANCE_ID,
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Envelope;
    }
  });
});
