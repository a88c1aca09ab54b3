import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, managementSessions, managementUsers, serviceAccounts } from "@studyflow/db";
import { SecretBox } from "@studyflow/domain/access";
import { loadConfig } from "../src/config";
import { bearer, managementToken } from "./fixtures";
import { signInAtProvider, startTestProvider, type TestProvider, type TestProviderClient } from "./oidc-provider";
import { createTestApp, type TestApp } from "./test-app";

// Management credentials and what they may see: sessions that end a working day after sign-in and
// are extended only with a refresh token the provider accepts, API keys shown to their creator once
// (security-api-key-reveal.test.ts has the reveal in depth), the management user list without
// e-mail addresses for non-admins.

const SIGNIN_SECRET = "signin-secret-for-tests-0123456789";

/** case-admin's signin-with-idp for a person its provider signed in. */
async function caseAdminSignIn(t: TestApp, sub: string, renewToken: string) {
  const res = await t.app.request("/v1/auth/signin-with-idp", {
    method: "POST",
    headers: { "content-type": "application/json", "X-Signin-Secret": SIGNIN_SECRET },
    body: JSON.stringify({ instanceId: "studyflow", sub, name: sub, email: `${sub}@example.org`, renewToken }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { accessToken: string; sessionID: string; expiresAt: number };
}

async function extendSession(t: TestApp, token: string, renewToken: string) {
  const res = await t.app.request("/v1/auth/extend-session", {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify({ renewToken }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The session's row and the session audit entries: what a refused extension must leave as it was. */
async function sessionState(t: TestApp, sessionId: string) {
  const [row] = await t.database.db.select().from(managementSessions).where(eq(managementSessions.id, sessionId));
  const audits = await t.database.db.select().from(auditLog).where(eq(auditLog.target, sessionId));
  return { row, audits: audits.length };
}

/** The refresh token a session holds, opened as renew-token would. */
async function heldRefreshToken(t: TestApp, sessionId: string) {
  const { row } = await sessionState(t, sessionId);
  const box = SecretBox.fromBase64(t.config.MANAGEMENT_SECRETS_KEY!);
  return box.open(row!.renewTokenEnc!, `management-session:${sessionId}`);
}

describe("settings of management sessions", () => {
  it("keeps a session a working day at most by default, and takes case-admin's provider whole, https in production", () => {
    expect(loadConfig({}).MANAGEMENT_SESSION_MAX_AGE_SECONDS).toBe(36_000);
    expect(() => loadConfig({ MANAGEMENT_SESSION_MAX_AGE_SECONDS: "60" })).toThrow(
      /MANAGEMENT_SESSION_MAX_AGE_SECONDS/,
    );
    expect(() => loadConfig({ MANAGEMENT_IDP_ISSUER: "https://login.example.org/tenant" })).toThrow(
      /MANAGEMENT_IDP_CLIENT_ID: is required when MANAGEMENT_IDP_ISSUER is set/,
    );
    expect(() => loadConfig({ MANAGEMENT_IDP_CLIENT_ID: "case-admin" })).toThrow(/MANAGEMENT_IDP_ISSUER: is required/);
    const provider = { MANAGEMENT_IDP_ISSUER: "http://127.0.0.1:9/", MANAGEMENT_IDP_CLIENT_ID: "case-admin" };
    expect(loadConfig(provider).MANAGEMENT_IDP_CLIENT_ID).toBe("case-admin");
    const production = {
      NODE_ENV: "production",
      MANAGEMENT_JWT_SECRET: randomBytes(32).toString("base64"),
      PARTICIPANT_JWT_SECRET: randomBytes(32).toString("base64"),
    };
    expect(() => loadConfig({ ...production, ...provider })).toThrow(
      /MANAGEMENT_IDP_ISSUER: must be https:\/\/ in production/,
    );
  });
});

describe("management sessions end at their maximum age from sign-in", () => {
  const MAX_AGE = 3600;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { MANAGEMENT_IDP_SIGNIN_SECRET: SIGNIN_SECRET, MANAGEMENT_SESSION_MAX_AGE_SECONDS: String(MAX_AGE) },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("extends within the maximum age, never past it; past it extend-session is 401 and nothing changes", async () => {
    const start = Date.now();
    t.setNow(start);
    try {
      const signedIn = await caseAdminSignIn(t, "ada", "refresh-ada-1");
      const { row: opened } = await sessionState(t, signedIn.sessionID);
      const lastEnd = opened!.createdAt.getTime() + MAX_AGE * 1000;
      // MANAGEMENT_SESSION_TTL_SECONDS (2 days) is capped by the maximum age from the start
      expect(opened!.expiresAt.getTime()).toBe(lastEnd);

      t.setNow(start + 1800_000);
      const extended = await extendSession(t, signedIn.accessToken, "refresh-ada-2");
      expect(extended.status).toBe(200);
      const { row: after } = await sessionState(t, signedIn.sessionID);
      expect(after!.expiresAt.getTime()).toBe(lastEnd);
      expect(await heldRefreshToken(t, signedIn.sessionID)).toBe("refresh-ada-2");
      const token = extended.body.accessToken as string;
      expect(decodeJwt(token).exp).toBeLessThanOrEqual(lastEnd / 1000);

      // the session has reached its end: its token is refused, so is its extension
      t.setNow(lastEnd + 1000);
      const before = await sessionState(t, signedIn.sessionID);
      const refused = await extendSession(t, token, "refresh-ada-3");
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: expect.stringMatching(/sign in again|expired/) });
      expect(await sessionState(t, signedIn.sessionID)).toEqual(before);
    } finally {
      t.setNow(Date.now());
    }
  });

  it("refuses (401) to extend a session older than the maximum age even while its end lies further", async () => {
    const signedIn = await caseAdminSignIn(t, "ben", "refresh-ben-1");
    // a session opened before the maximum age was configured: two days long, signed in 61 min ago
    await t.database.db
      .update(managementSessions)
      .set({ createdAt: new Date(Date.now() - (MAX_AGE + 60) * 1000), expiresAt: new Date(Date.now() + 86_400_000) })
      .where(eq(managementSessions.id, signedIn.sessionID));
    await t.settle();
    const before = await sessionState(t, signedIn.sessionID);
    const refused = await extendSession(t, signedIn.accessToken, "refresh-ben-2");
    expect(refused).toEqual({
      status: 401,
      body: { error: "the session has reached its maximum age: sign in again" },
    });
    // an empty renewToken mints no token past that age either
    expect((await extendSession(t, signedIn.accessToken, "")).status).toBe(401);
    expect(await sessionState(t, signedIn.sessionID)).toEqual(before);
    expect(await heldRefreshToken(t, signedIn.sessionID)).toBe("refresh-ben-1");
  });
});

describe("extend-session with case-admin's provider configured", () => {
  const caseAdminClient: TestProviderClient = {
    clientId: "case-admin",
    clientSecret: "case-admin-secret-0123456789",
    redirectUri: "http://localhost:3020/api/auth/callback/ms-entra-id",
  };
  let provider: TestProvider;
  let t: TestApp;
  /** case-admin's own refresh at the provider (its RenewOIDCToken), before it calls extend-session. */
  let refreshAsCaseAdmin: (refreshToken: string) => Promise<string>;

  beforeAll(async () => {
    provider = await startTestProvider({ clients: [caseAdminClient] });
    t = await createTestApp({
      env: {
        MANAGEMENT_IDP_SIGNIN_SECRET: SIGNIN_SECRET,
        MANAGEMENT_IDP_ISSUER: provider.issuer,
        MANAGEMENT_IDP_CLIENT_ID: caseAdminClient.clientId,
        MANAGEMENT_IDP_CLIENT_SECRET: caseAdminClient.clientSecret!,
      },
    });
    const configuration = await oidc.discovery(
      new URL(provider.issuer),
      caseAdminClient.clientId,
      caseAdminClient.clientSecret,
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    refreshAsCaseAdmin = async (refreshToken) => {
      const tokens = await oidc.refreshTokenGrant(configuration, refreshToken);
      return tokens.refresh_token ?? refreshToken;
    };
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /** A person signed in at the provider as case-admin's client, then at studyflow with that refresh token. */
  const signedInPerson = async (account: string) => {
    const tokens = await signInAtProvider(provider, caseAdminClient, account);
    expect(tokens.refresh_token).toBeDefined();
    return { refreshToken: tokens.refresh_token!, session: await caseAdminSignIn(t, account, tokens.refresh_token!) };
  };

  it("accepts a refresh token the provider refreshes for the session's person, and keeps the provider's answer", async () => {
    const { session } = await signedInPerson("cleo");
    // case-admin's renewal: the session's refresh token, renewed at the provider, sent to extend-session
    const held = await t.app.request(`/v1/auth/renew-token/${session.sessionID}`, {
      headers: bearer(session.accessToken),
    });
    const renewed = await refreshAsCaseAdmin(((await held.json()) as { renewToken: string }).renewToken);
    const extended = await extendSession(t, session.accessToken, renewed);
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    expect(extended.body.sessionID).toBe(session.sessionID);
    const audits = await t.database.db.select().from(auditLog).where(eq(auditLog.target, session.sessionID));
    expect(audits.map((audit) => audit.details)).toContainEqual({
      renewTokenReplaced: true,
      refreshedAtProvider: true,
    });
    // what the session holds now is a live refresh token of the provider: case-admin's next renewal works
    const next = await refreshAsCaseAdmin(await heldRefreshToken(t, session.sessionID));
    expect((await extendSession(t, extended.body.accessToken as string, next)).status).toBe(200);
  });

  it("refuses a renew token the provider does not know: 401, the session neither extended nor changed", async () => {
    const { session } = await signedInPerson("dora");
    const before = await sessionState(t, session.sessionID);
    const refused = await extendSession(t, session.accessToken, "bogus-refresh-token");
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({
      error: expect.stringMatching(/provider refused the renew token \(invalid_grant\)/),
    });
    expect(await sessionState(t, session.sessionID)).toEqual(before);
  });

  it("refuses another person's live refresh token: 401, nothing changed", async () => {
    const { session } = await signedInPerson("erin");
    const other = await signInAtProvider(provider, caseAdminClient, "frank");
    const before = await sessionState(t, session.sessionID);
    const refused = await extendSession(t, session.accessToken, other.refresh_token!);
    expect(refused).toEqual({ status: 401, body: { error: "the renew token is another person's: sign in again" } });
    expect(await sessionState(t, session.sessionID)).toEqual(before);
  });
});

describe("management credentials", () => {
  let t: TestApp;
  let admin: string;
  let researcher: string;
  let accountId: string;

  const addUser = async (email: string, isAdmin = false) => {
    const [row] = await t.database.db
      .insert(managementUsers)
      .values({ provider: "ms-entra", sub: `sub-${email}`, email, username: email.split("@")[0]!, isAdmin })
      .returning();
    return row!;
  };
  const um = (path: string) => `/v1/user-management${path}`;
  const get = (path: string, headers: Record<string, string>) => t.app.request(um(path), { headers });

  /** Every row of every table of the app's database, as text: where a secret could be kept. */
  const everyRowAsText = async (): Promise<string> => {
    const tables = await t.database.db.execute<{ table_name: string }>(
      sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    const texts: string[] = [];
    for (const { table_name } of tables) {
      const rows = await t.database.db.execute<{ row: string }>(
        sql`select t::text as row from ${sql.identifier(table_name)} t`,
      );
      texts.push(...rows.map((row) => row.row));
    }
    return texts.join("\n");
  };

  beforeAll(async () => {
    t = await createTestApp();
    const root = await addUser("root@example.org", true);
    admin = await managementToken(t, root.id, true);
    researcher = await managementToken(t, (await addUser("ana@example.org")).id);
    await addUser("ben@example.org");
    const [account] = await t.database.db
      .insert(serviceAccounts)
      .values({ label: "nightly export", createdBy: root.id })
      .returning();
    accountId = account!.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("service-account API keys: shown to their creator once", () => {
    it("answers the key in the creation and the creator's next list; later lists show a hint; nothing then gives it back", async () => {
      const created = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: { ...bearer(admin), "content-type": "text/plain;charset=UTF-8" },
        body: JSON.stringify({}),
      });
      expect(created.status).toBe(200);
      expect(created.headers.get("cache-control")).toBe("no-store");
      const { apiKey } = (await created.json()) as { apiKey: { id: string; key: string } };
      expect(apiKey.key).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
      const secretPart = apiKey.key.slice(11);

      // the key works
      expect((await get("/management-users", { "x-api-key": apiKey.key })).status).toBe(200);

      // the creator's next list shows it whole, once, where case-admin's dialog shows it
      const first = await get(`/service-accounts/${accountId}/api-keys`, bearer(admin));
      expect(first.status).toBe(200);
      expect(first.headers.get("cache-control")).toBe("no-store");
      expect(((await first.json()) as { apiKeys: { key: string }[] }).apiKeys).toEqual([
        expect.objectContaining({ id: apiKey.id, key: apiKey.key }),
      ]);

      // listed after that, by admins, with its first characters only, in the field case-admin shows
      const listed = await get(`/service-accounts/${accountId}/api-keys`, bearer(admin));
      expect(listed.status).toBe(200);
      const listText = await listed.text();
      expect(listText).not.toContain(secretPart);
      const { apiKeys } = JSON.parse(listText) as { apiKeys: { id: string; key: string }[] };
      expect(apiKeys).toEqual([expect.objectContaining({ id: apiKey.id, key: `${apiKey.key.slice(0, 11)}…` })]);

      // no sealed copy left (nor 0017's column of them), nothing in any row of any table (audit log included)
      const columns = await t.database.db.execute<{ column_name: string }>(
        sql`select column_name from information_schema.columns where table_name = 'api_keys'`,
      );
      expect(columns.map((column) => column.column_name)).not.toContain("key_enc");
      const copies = await t.database.db.execute(
        sql`select reveal_sealed, reveal_until from api_keys where id = ${apiKey.id}`,
      );
      expect([...copies]).toEqual([{ reveal_sealed: null, reveal_until: null }]);
      expect(await everyRowAsText()).not.toContain(secretPart);
    });

    it("refuses non-admins creating or listing keys (403), writing nothing", async () => {
      const before = await everyRowAsText();
      const made = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: bearer(researcher),
        body: "{}",
      });
      expect(made.status).toBe(403);
      expect(await made.json()).toEqual({ error: expect.stringMatching(/admin/) });
      expect((await get(`/service-accounts/${accountId}/api-keys`, bearer(researcher))).status).toBe(403);
      expect(await everyRowAsText()).toBe(before);
    });
  });

  describe("the management user list", () => {
    it("gives admins every field", async () => {
      const res = await get("/management-users", bearer(admin));
      expect(res.status).toBe(200);
      const { users } = (await res.json()) as { users: Record<string, unknown>[] };
      expect(users).toHaveLength(3);
      expect(users.find((user) => user.email === "root@example.org")).toMatchObject({
        username: "root",
        provider: "ms-entra",
        sub: "sub-root@example.org",
        isAdmin: true,
        createdAt: expect.stringMatching(/^\d{4}-/),
      });
      expect(users.map((user) => user.email).sort()).toEqual([
        "ana@example.org",
        "ben@example.org",
        "root@example.org",
      ]);
    });

    it("gives a non-admin and a service account's key only id, username and image: no e-mail, provider or admin flag", async () => {
      const made = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: bearer(admin),
        body: "{}",
      });
      const { apiKey } = (await made.json()) as { apiKey: { key: string } };
      for (const headers of [bearer(researcher), { "x-api-key": apiKey.key }]) {
        const res = await get("/management-users", headers);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).not.toContain("@example.org");
        expect(text).not.toContain("ms-entra");
        const { users } = JSON.parse(text) as { users: Record<string, unknown>[] };
        expect(users).toHaveLength(3);
        for (const user of users) expect(Object.keys(user).sort()).toEqual(["id", "imageUrl", "username"]);
        // what case-admin's study permission picker sorts and shows
        expect(users.map((user) => user.username).sort()).toEqual(["ana", "ben", "root"]);
      }
      expect((await get("/management-users", {})).status).toBe(401);
    });
  });
});
