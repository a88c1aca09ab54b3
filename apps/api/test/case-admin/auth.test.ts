import { execFile } from "node:child_process";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { eq, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRoles, auditLog, managementSessions, managementUsers, permissions } from "@studyflow/db";
import { createApiKey, revokeSubjectTokens } from "@studyflow/domain/access";
import { grantPermission } from "@studyflow/domain/study-setup";
import type { CasePermission } from "@studyflow/presenters/case-permission";
import { bearer, managementToken } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

/*
 * case-admin's sign-in calls (utils/server/api.ts: signInWithIdPRequest, getRenewTokenRequest,
 * extendSessionRequest) post `application/json` and take any status above 299 as a failure; its
 * permissions call (lib/data/userManagementAPI.ts getPermissionsForCurrentUser) is replayed from
 * case-admin-calls.json.
 */

const SECRET = "signin-secret-for-tests-0123456789";
const ADMIN_ROLE = "studyflow-admin";

interface SignInBody {
  instanceId?: string;
  sub?: string;
  name?: string;
  email?: string;
  imageURL?: string;
  provider?: string;
  roles?: string[];
  renewToken?: string;
}

/** case-admin's body for a person the provider signed in (its jwt callback). */
const caseAdminSignIn = (sub: string, extra: Partial<SignInBody> = {}): SignInBody => ({
  instanceId: "studyflow",
  sub,
  name: `Name ${sub}`,
  email: `${sub}@example.org`,
  imageURL: `https://img.example.org/${sub}.png`,
  provider: "ms-entra-id",
  roles: [],
  renewToken: `refresh-${sub}-1`,
  ...extra,
});

let address = 0;
/** A client address of its own per request group, so the failure limit of one test does not reach another. */
const freshAddress = () => `198.51.100.${(address += 1)}`;

async function signIn(
  t: TestApp,
  body: SignInBody | string,
  headers: Record<string, string> = { "X-Signin-Secret": SECRET },
  contentType = "application/json",
) {
  const response = await t.app.request("/v1/auth/signin-with-idp", {
    method: "POST",
    headers: { "content-type": contentType, "x-forwarded-for": freshAddress(), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function extendSession(t: TestApp, token: string | undefined, body: string | undefined) {
  const response = await t.app.request("/v1/auth/extend-session", {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? bearer(token) : {}) },
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, body: await response.json() };
}

async function renewToken(t: TestApp, token: string | undefined, sessionId: string) {
  const response = await t.app.request(`/v1/auth/renew-token/${sessionId}`, {
    headers: token ? bearer(token) : {},
  });
  return { status: response.status, body: await response.json() };
}

const myPermissions = (t: TestApp, token?: string) =>
  replayCaseAdminCall(t, caseAdminCall("getPermissionsForCurrentUser"), token ? { token } : {});

async function counts(t: TestApp) {
  const [users] = await t.database.db.select({ n: sql<number>`count(*)::int` }).from(managementUsers);
  const [sessions] = await t.database.db.select({ n: sql<number>`count(*)::int` }).from(managementSessions);
  const [audits] = await t.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(auditLog)
    .where(sql`${auditLog.action} like 'session.%'`);
  return { users: users?.n, sessions: sessions?.n, audits: audits?.n };
}

async function userBySub(t: TestApp, sub: string) {
  const [row] = await t.database.db.select().from(managementUsers).where(eq(managementUsers.sub, sub));
  return row;
}

async function sessionRow(t: TestApp, id: string) {
  const [row] = await t.database.db.select().from(managementSessions).where(eq(managementSessions.id, id));
  return row;
}

describe("management sign-in turned off (no MANAGEMENT_IDP_SIGNIN_SECRET)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("refuses every caller with 401 and writes nothing", async () => {
    const attempts: Record<string, string>[] = [{}, { "X-Signin-Secret": SECRET }, { "X-Signin-Secret": "" }];
    for (const headers of attempts) {
      const answer = await signIn(t, caseAdminSignIn("off-1"), headers);
      expect(answer).toEqual({
        status: 401,
        body: { error: "sign-in with an identity provider is not enabled on this server" },
      });
    }
    expect(await counts(t)).toEqual({ users: 0, sessions: 0, audits: 0 });
  });
});

describe("case-admin's sign-in (auth routes)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { MANAGEMENT_IDP_SIGNIN_SECRET: SECRET, MANAGEMENT_IDP_ADMIN_ROLE: ADMIN_ROLE },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  describe("POST /v1/auth/signin-with-idp: the caller's proof", () => {
    it("401 without X-Signin-Secret, with a wrong one, with one of the right length; before the body is read; nothing written", async () => {
      const before = await counts(t);
      const wrongs: Record<string, string>[] = [
        {},
        { "X-Signin-Secret": "nope" },
        { "X-Signin-Secret": SECRET.replace(/.$/, "X") },
      ];
      for (const headers of wrongs) {
        const answer = await signIn(t, caseAdminSignIn("proof-1"), headers);
        expect(answer.status).toBe(401);
        expect(answer.body.error).toMatch(/X-Signin-Secret/);
      }
      // a broken body from an unproven caller learns nothing about the body
      expect((await signIn(t, "{not json", {})).status).toBe(401);
      expect(await counts(t)).toEqual(before);
      expect(await userBySub(t, "proof-1")).toBeUndefined();
    });

    it("limits failed proofs per client address: 429 once ten failed, even with the right secret", async () => {
      const from = freshAddress();
      for (let i = 0; i < 10; i += 1) {
        expect(
          (await signIn(t, caseAdminSignIn("limit-1"), { "X-Signin-Secret": "guess", "x-forwarded-for": from })).status,
        ).toBe(401);
      }
      const limited = await signIn(t, caseAdminSignIn("limit-1"), {
        "X-Signin-Secret": SECRET,
        "x-forwarded-for": from,
      });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatch(/too many failed sign-in attempts/);
      expect(await userBySub(t, "limit-1")).toBeUndefined();
      // another address is not limited
      expect((await signIn(t, caseAdminSignIn("limit-1"))).status).toBe(200);
    });
  });

  describe("POST /v1/auth/signin-with-idp: the sign-in", () => {
    it("creates the management user and a session, answers as case-backend, audits", async () => {
      const answer = await signIn(t, caseAdminSignIn("alice"));
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(["accessToken", "expiresAt", "isAdmin", "sessionID"]);
      expect(answer.body.isAdmin).toBe(false);
      const user = await userBySub(t, "alice");
      expect(user).toMatchObject({
        provider: "ms-entra-id",
        email: "alice@example.org",
        username: "Name alice",
        imageUrl: "https://img.example.org/alice.png",
        isAdmin: false,
      });
      expect(user?.lastLoginAt).toBeInstanceOf(Date);
      const claims = decodeJwt(answer.body.accessToken);
      expect(claims).toMatchObject({
        typ: "management",
        sub: user?.id,
        sid: answer.body.sessionID,
        iss: "studyflow",
        admin: false,
      });
      expect(claims.exp).toBe(answer.body.expiresAt);
      const now = Math.floor(Date.now() / 1000);
      expect(answer.body.expiresAt).toBeGreaterThan(now + 3_500);
      expect(answer.body.expiresAt).toBeLessThanOrEqual(now + 3_601);
      // the refresh token is sealed at rest
      const session = await sessionRow(t, answer.body.sessionID);
      expect(session).toMatchObject({ userId: user?.id, kind: "case-admin" });
      expect(session?.renewTokenEnc).toBeInstanceOf(Buffer);
      expect(session?.renewTokenEnc?.toString("latin1")).not.toContain("refresh-alice-1");
      expect(session?.keyId).toMatch(/^[0-9a-f]{16}$/);
      // MANAGEMENT_SESSION_TTL_SECONDS (2 days), capped at MANAGEMENT_SESSION_MAX_AGE_SECONDS (10 h) from sign-in
      expect(session!.expiresAt.getTime() - session!.createdAt.getTime()).toBe(36_000_000);
      const [audit] = await t.database.db
        .select()
        .from(auditLog)
        .where(sql`${auditLog.action} = 'session.signin' and ${auditLog.target} = ${user!.id}`);
      expect(audit).toMatchObject({ studyKey: null, actor: user?.id });
      expect(audit?.details).toMatchObject({
        created: true,
        isAdmin: false,
        sessionId: answer.body.sessionID,
        renewToken: true,
      });
      expect(JSON.stringify(audit?.details)).not.toContain("refresh-alice-1");
      // the token works on management routes
      const permissionsAnswer = await myPermissions(t, answer.body.accessToken);
      expect(permissionsAnswer.failed).toBe(false);
    });

    it("reads a text/plain body with Go-style keys too", async () => {
      const body = JSON.stringify({ INSTANCEID: "studyflow", Sub: "plain-1", EMAIL: "p@example.org", RenewToken: "r" });
      const answer = await signIn(t, body, { "X-Signin-Secret": SECRET }, "text/plain;charset=UTF-8");
      expect(answer.status).toBe(200);
      expect(await userBySub(t, "plain-1")).toMatchObject({ email: "p@example.org", provider: "" });
    });

    it("updates the same user at the next sign-in; the admin role follows the provider's roles, at once for earlier tokens", async () => {
      const first = await signIn(t, caseAdminSignIn("bob", { roles: ["reader", ADMIN_ROLE] }));
      expect(first.body.isAdmin).toBe(true);
      expect((await myPermissions(t, first.body.accessToken)).body.isAdmin).toBe(true);
      const id = (await userBySub(t, "bob"))?.id;
      const second = await signIn(
        t,
        caseAdminSignIn("bob", { roles: ["reader"], email: "bob@new.example.org", name: "Bob B" }),
      );
      expect(second.status).toBe(200);
      expect(second.body.isAdmin).toBe(false);
      const row = await userBySub(t, "bob");
      expect(row).toMatchObject({ id, email: "bob@new.example.org", username: "Bob B", isAdmin: false });
      expect(second.body.sessionID).not.toBe(first.body.sessionID);
      // the first token's admin claim no longer counts: the row says
      await t.settle();
      expect((await myPermissions(t, first.body.accessToken)).body.isAdmin).toBe(false);
      const created = await t.database.db
        .select({ details: auditLog.details })
        .from(auditLog)
        .where(sql`${auditLog.action} = 'session.signin' and ${auditLog.target} = ${id}`);
      expect(created.map((row) => (row.details as { created: boolean }).created)).toEqual([true, false]);
    });

    it("CASE's own admin role name counts only when it is the configured one", async () => {
      const answer = await signIn(t, caseAdminSignIn("carol", { roles: ["ADMIN"] }));
      expect(answer.body.isAdmin).toBe(false);
      expect((await userBySub(t, "carol"))?.isAdmin).toBe(false);
    });

    it("without a refresh token: a session all the same, holding none", async () => {
      const { renewToken: _omitted, ...body } = caseAdminSignIn("dave");
      const answer = await signIn(t, { ...body, roles: undefined, name: undefined });
      expect(answer.status).toBe(200);
      expect(answer.body.sessionID).toMatch(/^[0-9a-f-]{36}$/);
      expect((await sessionRow(t, answer.body.sessionID))?.renewTokenEnc).toBeNull();
      expect(await renewToken(t, answer.body.accessToken, answer.body.sessionID)).toEqual({
        status: 200,
        body: { renewToken: "" },
      });
    });

    it("400 for another instance, an empty or missing sub, bad JSON, an overlong field; nothing written", async () => {
      const before = await counts(t);
      const other = await signIn(t, caseAdminSignIn("erin", { instanceId: "default" }));
      expect(other.status).toBe(400);
      expect(other.body.error).toMatch(/instanceID/);
      const empty = await signIn(t, caseAdminSignIn("", {}));
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatch(/body\.sub: missing sub/);
      const { sub: _none, ...withoutSub } = caseAdminSignIn("x");
      expect((await signIn(t, withoutSub)).body.error).toMatch(/body\.sub/);
      expect((await signIn(t, "{broken")).status).toBe(400);
      expect((await signIn(t, "")).body.error).toMatch(/body/);
      const long = await signIn(t, caseAdminSignIn("erin", { email: `${"e".repeat(400)}@example.org` }));
      expect(long.body.error).toMatch(/body\.email/);
      const roles = await signIn(t, caseAdminSignIn("erin", { roles: "ADMIN" as unknown as string[] }));
      expect(roles.body.error).toMatch(/body\.roles/);
      expect(await counts(t)).toEqual(before);
    });
  });

  describe("renew-token and extend-session", () => {
    it("case-admin's renewal: read the refresh token, extend with the provider's new one, read it back", async () => {
      const signedIn = await signIn(t, caseAdminSignIn("frank", { roles: [ADMIN_ROLE] }));
      const { accessToken, sessionID } = signedIn.body;
      expect(await renewToken(t, accessToken, sessionID)).toEqual({
        status: 200,
        body: { renewToken: "refresh-frank-1" },
      });
      const opened = (await sessionRow(t, sessionID))!;
      const extendedAt = Date.now() + 60_000;
      t.setNow(extendedAt);
      const extended = await extendSession(t, accessToken, JSON.stringify({ renewToken: "refresh-frank-2" }));
      expect(extended.status).toBe(200);
      expect(extended.body).toMatchObject({ sessionID, isAdmin: true });
      expect(extended.body.accessToken).not.toBe(accessToken);
      expect(decodeJwt(extended.body.accessToken)).toMatchObject({ sid: sessionID, exp: extended.body.expiresAt });
      expect(extended.body.expiresAt).toBeGreaterThan(signedIn.body.expiresAt);
      // rotated, not a new session: one session of the user
      const user = await userBySub(t, "frank");
      const sessions = await t.database.db
        .select()
        .from(managementSessions)
        .where(eq(managementSessions.userId, user!.id));
      expect(sessions).toHaveLength(1);
      // moved MANAGEMENT_SESSION_TTL_SECONDS ahead, never past MANAGEMENT_SESSION_MAX_AGE_SECONDS from sign-in
      expect(sessions[0]!.expiresAt.getTime()).toBe(
        Math.min(
          extendedAt + t.config.MANAGEMENT_SESSION_TTL_SECONDS * 1000,
          opened.createdAt.getTime() + t.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS * 1000,
        ),
      );
      expect(await renewToken(t, extended.body.accessToken, sessionID)).toEqual({
        status: 200,
        body: { renewToken: "refresh-frank-2" },
      });
      const [audit] = await t.database.db
        .select()
        .from(auditLog)
        .where(sql`${auditLog.action} = 'session.extend' and ${auditLog.target} = ${sessionID}`);
      expect(audit).toMatchObject({ actor: user?.id, details: { renewTokenReplaced: true } });
      // an empty renewToken keeps the session's
      const kept = await extendSession(t, extended.body.accessToken, JSON.stringify({ renewToken: "" }));
      expect(kept.status).toBe(200);
      expect((await renewToken(t, kept.body.accessToken, sessionID)).body).toEqual({ renewToken: "refresh-frank-2" });
      // isAdmin is the row's, not the old token's
      await t.database.db.update(managementUsers).set({ isAdmin: false }).where(eq(managementUsers.id, user!.id));
      await t.settle();
      const demoted = await extendSession(t, kept.body.accessToken, JSON.stringify({ RenewToken: "refresh-frank-3" }));
      expect(demoted.body.isAdmin).toBe(false);
      expect(decodeJwt(demoted.body.accessToken).admin).toBe(false);
      t.setNow(Date.now());
    });

    it("a token never outlives its session", async () => {
      const signedIn = await signIn(t, caseAdminSignIn("gina"));
      const end = new Date(Date.now() + 600_000);
      await t.database.db
        .update(managementSessions)
        .set({ expiresAt: end })
        .where(eq(managementSessions.id, signedIn.body.sessionID));
      await t.settle();
      const extended = await extendSession(t, signedIn.body.accessToken, JSON.stringify({ renewToken: "" }));
      expect(extended.body.expiresAt).toBe(Math.floor(end.getTime() / 1000));
    });

    it("403 for another user's session, 404 for an unknown or malformed one, 401 without a token", async () => {
      const mine = await signIn(t, caseAdminSignIn("hank"));
      const theirs = await signIn(t, caseAdminSignIn("ivy"));
      const other = await renewToken(t, mine.body.accessToken, theirs.body.sessionID);
      expect(other).toEqual({ status: 403, body: { error: "session belongs to another user" } });
      expect((await renewToken(t, mine.body.accessToken, "0b7c9a52-6f3e-4d8e-9b1a-2f4c5d6e7f80")).status).toBe(404);
      expect((await renewToken(t, mine.body.accessToken, "not-a-session")).status).toBe(404);
      const anonymous = await renewToken(t, undefined, mine.body.sessionID);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error).toMatch(/Authorization/);
      // an operator's token holds no session of the user
      const cli = await managementToken(t, "operator-1", true);
      expect((await renewToken(t, cli, mine.body.sessionID)).status).toBe(403);
    });

    it("extend-session: 401 without a token, 400 without a body, 403 for tokens of no session and API keys; nothing written", async () => {
      const signedIn = await signIn(t, caseAdminSignIn("jack"));
      const before = await counts(t);
      const sealedBefore = (await sessionRow(t, signedIn.body.sessionID))?.renewTokenEnc;
      const anonymous = await extendSession(t, undefined, JSON.stringify({ renewToken: "x" }));
      expect(anonymous.status).toBe(401);
      const noBody = await extendSession(t, signedIn.body.accessToken, undefined);
      expect(noBody.status).toBe(400);
      expect(noBody.body.error).toMatch(/body/);
      const badType = await extendSession(t, signedIn.body.accessToken, JSON.stringify({ renewToken: 5 }));
      expect(badType.body.error).toMatch(/body\.renewToken/);
      const cli = await managementToken(t, "operator-2", true);
      const refused = await extendSession(t, cli, JSON.stringify({ renewToken: "x" }));
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/no sign-in session/);
      const { key } = await createApiKey(t.database.db, {
        now: new Date(),
        subject: "machine-1",
        label: "m",
        createdBy: "test",
      });
      const byKey = await t.app.request("/v1/auth/extend-session", {
        method: "POST",
        headers: { "X-API-Key": key },
        body: JSON.stringify({ renewToken: "x" }),
      });
      expect(byKey.status).toBe(403);
      expect(await counts(t)).toEqual(before);
      expect((await sessionRow(t, signedIn.body.sessionID))?.renewTokenEnc).toEqual(sealedBefore);
    });
  });

  describe("session tokens end with their session, their user, or a revocation", () => {
    it("a deleted session, a deleted user, revoked tokens: 401", async () => {
      const a = await signIn(t, caseAdminSignIn("kate"));
      const b = await signIn(t, caseAdminSignIn("kate"));
      expect((await myPermissions(t, a.body.accessToken)).status).toBe(200);
      await t.database.db.delete(managementSessions).where(eq(managementSessions.id, a.body.sessionID));
      await t.settle();
      const ended = await myPermissions(t, a.body.accessToken);
      expect(ended.status).toBe(401);
      expect(ended.body.error).toMatch(/session ended/);
      expect((await extendSession(t, a.body.accessToken, JSON.stringify({ renewToken: "x" }))).status).toBe(401);
      // the other session of the same user still works
      expect((await myPermissions(t, b.body.accessToken)).status).toBe(200);
      const user = await userBySub(t, "kate");
      await revokeSubjectTokens(t.database.db, user!.id, new Date(Date.now() + 1_000));
      expect((await myPermissions(t, b.body.accessToken)).status).toBe(401);

      const c = await signIn(t, caseAdminSignIn("leo"));
      await t.database.db.delete(managementUsers).where(eq(managementUsers.sub, "leo"));
      await t.settle();
      expect((await myPermissions(t, c.body.accessToken)).status).toBe(401);
    });

    it("an expired session: 401 even before the token's own end", async () => {
      const signedIn = await signIn(t, caseAdminSignIn("mia"));
      await t.database.db
        .update(managementSessions)
        // a second before the app's clock, which an earlier test may have stopped
        .set({ expiresAt: new Date((t.deps.clock ?? Date.now)() - 1_000) })
        .where(eq(managementSessions.id, signedIn.body.sessionID));
      await t.settle();
      expect((await myPermissions(t, signedIn.body.accessToken)).status).toBe(401);
      expect((await renewToken(t, signedIn.body.accessToken, signedIn.body.sessionID)).status).toBe(401);
    });
  });

  describe("GET /v1/auth/permissions (getPermissionsForCurrentUser)", () => {
    it("the user's grants as CASE Permissions and app roles; nobody else's", async () => {
      const signedIn = await signIn(t, caseAdminSignIn("nina"));
      const user = await userBySub(t, "nina");
      const id = user!.id;
      await grantPermission(t.database.db, id, "flu", "read-study-config");
      await t.database.db.insert(permissions).values([
        {
          subjectId: id,
          resourceType: "study",
          studyKey: "flu",
          action: "update-survey",
          limiter: [{ surveyKey: "intake" }],
        },
        { subjectId: id, resourceType: "messaging", studyKey: "global-email-templates", action: "*" },
        { subjectId: id, subjectType: "service-account", studyKey: "flu", action: "get-responses" },
        { subjectId: "someone-else", studyKey: "flu", action: "delete-study" },
      ]);
      await t.database.db.insert(appRoles).values([
        { subjectId: id, subjectType: "management-user", appName: "case-admin", role: "researcher" },
        { subjectId: "someone-else", subjectType: "management-user", appName: "case-admin", role: "admin" },
      ]);
      await t.settle();
      const answer = await myPermissions(t, signedIn.body.accessToken);
      expect(answer.failed).toBe(false);
      expect(answer.body.isAdmin).toBe(false);
      const seen = (answer.body.permissions as CasePermission[]).map((p) => ({
        subjectId: p.subjectId,
        subjectType: p.subjectType,
        resourceType: p.resourceType,
        resourceKey: p.resourceKey,
        action: p.action,
        limiter: p.limiter,
      }));
      expect(seen).toEqual([
        {
          subjectId: id,
          subjectType: "management-user",
          resourceType: "study",
          resourceKey: "flu",
          action: "read-study-config",
          limiter: undefined,
        },
        {
          subjectId: id,
          subjectType: "management-user",
          resourceType: "study",
          resourceKey: "flu",
          action: "update-survey",
          limiter: [{ surveyKey: "intake" }],
        },
        {
          subjectId: id,
          subjectType: "management-user",
          resourceType: "messaging",
          resourceKey: "global-email-templates",
          action: "*",
          limiter: undefined,
        },
      ]);
      for (const permission of answer.body.permissions as CasePermission[]) expect(permission.id).toMatch(/^\d+$/);
      expect(answer.body.appRoles).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          subjectId: id,
          subjectType: "management-user",
          appName: "case-admin",
          role: "researcher",
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);
    });

    it("a new user: empty lists, not null; an operator's token: its own grants and admin flag; 401 without a token", async () => {
      const fresh = await signIn(t, caseAdminSignIn("oscar", { roles: [ADMIN_ROLE] }));
      expect((await myPermissions(t, fresh.body.accessToken)).body).toEqual({
        isAdmin: true,
        permissions: [],
        appRoles: [],
      });
      await grantPermission(t.database.db, "operator-3", "flu", "get-responses");
      const cli = await managementToken(t, "operator-3", false);
      const answer = await myPermissions(t, cli);
      expect(answer.body.isAdmin).toBe(false);
      expect((answer.body.permissions as CasePermission[]).map((p) => p.action)).toEqual(["get-responses"]);
      const anonymous = await myPermissions(t);
      expect(anonymous.status).toBe(401);
      expect(anonymous.failed).toBe(true);
    });
  });

  describe("the participant routes under /v1/auth", () => {
    it("still answer as before: login and renewal are the participant ones", async () => {
      const login = await t.app.request("/v1/auth/login", {
        method: "POST",
        headers: { "x-forwarded-for": freshAddress() },
        body: JSON.stringify({ email: "nobody@example.org", password: "wrong-password-1" }),
      });
      expect(login.status).toBe(401);
      expect(await login.json()).toEqual({ error: expect.stringMatching(/email or password/) });
      const renew = await t.app.request("/v1/auth/token/renew", { method: "POST", body: JSON.stringify({}) });
      expect([400, 401]).toContain(renew.status);
      // a management token is no participant token
      const signedIn = await signIn(t, caseAdminSignIn("pia"));
      const asParticipant = await t.app.request("/v1/auth/logout", {
        method: "POST",
        headers: bearer(signedIn.body.accessToken),
      });
      expect(asParticipant.status).toBe(401);
    });
  });

  describe("case-admin's preload (e2e/case-admin/signin-secret.cjs)", () => {
    const preload = fileURLToPath(new URL("../../../../e2e/case-admin/signin-secret.cjs", import.meta.url));
    /** What case-admin's signInWithIdPRequest and an ordinary call do, in a process started with the preload. */
    const script = `
      const base = process.env.MANAGEMENT_API_URL;
      (async () => {
        const signIn = await fetch(new URL("/v1/auth/signin-with-idp", base).toString(), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: process.env.SIGNIN_BODY,
        });
        const other = await fetch(new URL(process.env.OTHER_PATH, process.env.OTHER_BASE).toString(), { method: "POST", body: "{}" });
        console.log(JSON.stringify({ status: signIn.status, body: await signIn.json(), other: other.status }));
      })();`;
    const run = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, ["--require", preload, "-e", script], {
        env: { PATH: process.env.PATH ?? "", ...env },
        timeout: 20_000,
      });

    it("adds X-Signin-Secret to the sign-in only: case-admin signs in unchanged, other hosts and paths never see the secret", async () => {
      const seen: IncomingHttpHeaders[] = [];
      const elsewhere = createServer((request, response) => {
        seen.push(request.headers);
        response.end("{}");
      });
      await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
      const server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
      await new Promise<void>((resolve) => server.once("listening", resolve));
      try {
        const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const otherUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
        const body = JSON.stringify(caseAdminSignIn("preload-1"));
        const signedIn = JSON.parse(
          (
            await run({
              MANAGEMENT_API_URL: apiUrl,
              MANAGEMENT_IDP_SIGNIN_SECRET: SECRET,
              SIGNIN_BODY: body,
              OTHER_BASE: otherUrl,
              OTHER_PATH: "/v1/auth/signin-with-idp",
            })
          ).stdout,
        );
        expect(signedIn.status).toBe(200);
        expect(signedIn.body.sessionID).toMatch(/^[0-9a-f-]{36}$/);
        expect(await userBySub(t, "preload-1")).toBeDefined();
        // the same path on another host: no secret
        expect(seen).toHaveLength(1);
        expect(seen[0]?.["x-signin-secret"]).toBeUndefined();
        // without the secret in case-admin's environment the preload adds nothing: 401
        const unproven = JSON.parse(
          (
            await run({
              MANAGEMENT_API_URL: apiUrl,
              SIGNIN_BODY: JSON.stringify(caseAdminSignIn("preload-2")),
              OTHER_BASE: otherUrl,
              OTHER_PATH: "/v1/other",
            })
          ).stdout,
        );
        expect(unproven.status).toBe(401);
        expect(await userBySub(t, "preload-2")).toBeUndefined();
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await new Promise((resolve) => elsewhere.close(resolve));
      }
    });
  });
});
