import { and, eq } from "drizzle-orm";
import { calculatePKCECodeChallenge, randomPKCECodeVerifier } from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, managementSessions, managementUsers } from "@studyflow/db";
import { SecretBox } from "@studyflow/domain/access";
import { grantPermission } from "@studyflow/domain/study-setup";
import { managementToken, setupStudy } from "./fixtures";
import { startTestProvider, walkProvider, type TestProvider } from "./oidc-provider";
import { createTestApp, type TestApp } from "./test-app";

// The console's sign-in against a real OpenID provider (oidc-provider, a certified implementation)
// on 127.0.0.1: its development login and consent pages driven over HTTP as a browser would, the
// console's routes called in-process. e2e/test/console/oidc-sign-in.test.ts walks the same flow
// in Chromium.

const CLIENT_ID = "studyflow-console";
const CLIENT_SECRET = "studyflow-console-secret-0123456789";
/** As browsers reach the in-process app (`app.request` names http://localhost). */
const ORIGIN = "http://localhost";
const REDIRECT_URI = `${ORIGIN}/console/oidc/callback`;
const SESSION_COOKIE = "__Host-studyflow_console";
const ATTEMPT_COOKIE = "__Secure-studyflow_console_oidc";

/** Name=value of a Set-Cookie header, and its attributes (lower-case names). */
function parseSetCookie(header: string) {
  const [pair = "", ...attributes] = header.split(/;\s*/);
  const at = pair.indexOf("=");
  return {
    name: pair.slice(0, at),
    value: pair.slice(at + 1),
    attributes: Object.fromEntries(
      attributes.map((attribute) => {
        const [name = "", ...value] = attribute.split("=");
        return [name.toLowerCase(), value.join("=")];
      }),
    ),
  };
}

function cookieOf(res: Response, name: string) {
  return res.headers
    .getSetCookie()
    .map(parseSetCookie)
    .find((cookie) => cookie.name === name);
}

describe("the console's OpenID Connect sign-in", () => {
  let provider: TestProvider;
  let t: TestApp;
  let off: TestApp;

  /** GET /console/oidc/login: the attempt cookie and the provider's authorization URL. */
  const startLogin = async (returnTo = "#/studies") => {
    const res = await t.app.request(`/console/oidc/login?return=${encodeURIComponent(returnTo)}`);
    expect(res.status).toBe(302);
    const attempt = cookieOf(res, ATTEMPT_COOKIE);
    expect(attempt).toBeDefined();
    return { attempt: `${ATTEMPT_COOKIE}=${attempt!.value}`, authorizationUrl: res.headers.get("location")! };
  };

  /** Login, the provider's pages as `account`, and back: the callback's path and query, and the attempt cookie. */
  const throughProvider = async (account: string) => {
    const { attempt, authorizationUrl } = await startLogin();
    const callback = new URL(await walkProvider(provider, authorizationUrl, account));
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    return { attempt, callback: callback.pathname + callback.search };
  };

  const callbackWith = (path: string, cookie?: string) => t.app.request(path, cookie ? { headers: { cookie } } : {});

  /** A whole sign-in: the session cookie (as the browser sends it back) and the callback's answer. */
  const signIn = async (account: string) => {
    const { attempt, callback } = await throughProvider(account);
    const res = await callbackWith(callback, attempt);
    expect(res.status, await res.clone().text()).toBe(303);
    const session = cookieOf(res, SESSION_COOKIE);
    expect(session).toBeDefined();
    return { res, cookie: `${SESSION_COOKIE}=${session!.value}`, setCookie: session! };
  };

  const sessionOf = async (cookie: string) => {
    const res = await t.app.request("/console/oidc/session", { headers: { cookie } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const studiesWith = (headers: Record<string, string>) => t.app.request("/v1/studies", { headers });

  const consoleSessionCount = async () =>
    (await t.database.db.select().from(managementSessions).where(eq(managementSessions.kind, "console"))).length;

  beforeAll(async () => {
    provider = await startTestProvider({
      clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT_URI }],
      groups: { grace: ["staff", "studyflow-admins"] },
    });
    t = await createTestApp({
      env: {
        CONSOLE_OIDC_ISSUER: provider.issuer,
        CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
        CONSOLE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        CONSOLE_OIDC_REDIRECT_URI: REDIRECT_URI,
        CONSOLE_OIDC_SCOPES: "openid email profile groups offline_access",
        CONSOLE_OIDC_PROVIDER_NAME: "Example ID",
        CONSOLE_OIDC_ADMIN_CLAIM: "groups",
        CONSOLE_OIDC_ADMIN_VALUE: "studyflow-admins",
      },
    });
    off = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-b" });
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
    await provider?.close();
  });

  it("tells the console whether it is configured; without a provider the sign-in routes do not exist", async () => {
    expect(await (await t.app.request("/console/oidc/config")).json()).toEqual({
      enabled: true,
      providerName: "Example ID",
    });
    expect(await (await off.app.request("/console/oidc/config")).json()).toEqual({
      enabled: false,
      providerName: null,
    });
    for (const path of ["/console/oidc/login", "/console/oidc/callback", "/console/oidc/session"]) {
      const res = await off.app.request(path);
      expect(res.status, path).toBe(404);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    }
    expect((await off.app.request("/console/oidc/sign-out", { method: "POST" })).status).toBe(404);
    // and a cookie of that name signs nobody in there
    const stray = await off.app.request("/v1/studies", {
      headers: { cookie: `${SESSION_COOKIE}=anything`, "X-CSRF-Token": "anything" },
    });
    expect(stray.status).toBe(401);
    expect(await stray.json()).toEqual({ error: "missing Authorization header" });
  });

  it("sends the browser to the provider with PKCE (S256), state and nonce fresh for each attempt", async () => {
    const first = await startLogin();
    const second = await startLogin();
    const params = (url: string) => new URL(url).searchParams;
    const a = params(first.authorizationUrl);
    expect(first.authorizationUrl.startsWith(`${provider.issuer}/`)).toBe(true);
    expect(a.get("client_id")).toBe(CLIENT_ID);
    expect(a.get("redirect_uri")).toBe(REDIRECT_URI);
    expect(a.get("response_type")).toBe("code");
    expect(a.get("code_challenge_method")).toBe("S256");
    expect(a.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.get("scope")).toBe("openid email profile groups offline_access");
    const b = params(second.authorizationUrl);
    for (const name of ["state", "nonce", "code_challenge"]) {
      expect(a.get(name)?.length, name).toBeGreaterThanOrEqual(22);
      expect(a.get(name), name).not.toBe(b.get(name));
    }
    // the attempt cookie: sealed, HttpOnly, Secure, Lax (the provider's redirect back is cross-site), /console only, 10 min
    const res = await t.app.request("/console/oidc/login");
    const cookie = cookieOf(res, ATTEMPT_COOKIE)!;
    expect(cookie.attributes).toMatchObject({ path: "/console", httponly: "", secure: "", samesite: "Lax" });
    expect(cookie.attributes["max-age"]).toBe("600");
    expect(cookie.value).not.toContain(a.get("state"));
  });

  it("signs a person in: a management user of (issuer, sub), a console session, a strict session cookie", async () => {
    const before = Date.now();
    const { res, setCookie, cookie } = await signIn("ada");
    expect(res.headers.get("location")).toBe("/console#/studies");
    expect(setCookie.attributes).toMatchObject({ path: "/", httponly: "", secure: "", samesite: "Strict" });
    // the session's life: MANAGEMENT_SESSION_TTL_SECONDS, at most MANAGEMENT_SESSION_MAX_AGE_SECONDS
    const sessionSeconds = Math.min(
      t.config.MANAGEMENT_SESSION_TTL_SECONDS,
      t.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS,
    );
    expect(Number(setCookie.attributes["max-age"])).toBe(sessionSeconds);
    expect(setCookie.attributes).not.toHaveProperty("domain");
    // the attempt is gone from the browser
    expect(cookieOf(res, ATTEMPT_COOKIE)?.attributes["max-age"]).toBe("0");

    const [user] = await t.database.db
      .select()
      .from(managementUsers)
      .where(and(eq(managementUsers.provider, provider.issuer), eq(managementUsers.sub, "ada")));
    expect(user).toMatchObject({ email: "ada@example.org", username: "Ada Tester", isAdmin: false });
    const [session] = await t.database.db
      .select()
      .from(managementSessions)
      .where(eq(managementSessions.userId, user!.id));
    expect(session?.kind).toBe("console");
    expect(session!.expiresAt.getTime()).toBeGreaterThanOrEqual(before + sessionSeconds * 1000 - 1000);
    expect(session!.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + sessionSeconds * 1000);
    // the provider's refresh token, sealed for this session's row; the cookie is neither it nor the session id
    const box = SecretBox.fromBase64(t.config.MANAGEMENT_SECRETS_KEY!);
    expect(session?.renewTokenEnc).not.toBeNull();
    expect(box.open(session!.renewTokenEnc!, `management-session:${session!.id}`).length).toBeGreaterThan(10);
    expect(cookie).not.toContain(session!.id);

    const answer = await sessionOf(cookie);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      subject: user!.id,
      displayName: "Ada Tester",
      email: "ada@example.org",
      isAdmin: false,
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.actor, user!.id));
    expect(audit.map((entry) => [entry.action, (entry.details as { kind?: string }).kind])).toEqual([
      ["session.signin", "console"],
    ]);
  });

  it("answers API calls by the cookie with the user's grants; the CSRF token is required and another origin refused", async () => {
    const { cookie } = await signIn("ben");
    const { body } = await sessionOf(cookie);
    const csrf = body.csrfToken as string;
    await grantPermission(t.database.db, body.subject as string, "study-a", "*");

    const ok = await studiesWith({ cookie, "X-CSRF-Token": csrf, Origin: ORIGIN });
    expect(ok.status).toBe(200);
    const { studies } = (await ok.json()) as { studies: { key: string }[] };
    expect(studies.map((study) => study.key)).toEqual(["study-a"]);
    // no Origin (a same-origin GET) is fine too
    expect((await studiesWith({ cookie, "X-CSRF-Token": csrf })).status).toBe(200);
    // another study's page: 403 as for any researcher without the grant
    expect((await t.app.request("/v1/studies/study-b", { headers: { cookie, "X-CSRF-Token": csrf } })).status).toBe(
      403,
    );

    const refused: Record<string, string>[] = [
      { cookie },
      { cookie, "X-CSRF-Token": "" },
      { cookie, "X-CSRF-Token": `${csrf.slice(0, -1)}${csrf.endsWith("A") ? "B" : "A"}` },
      { cookie, "X-CSRF-Token": csrf, Origin: "https://evil.example" },
      { cookie, "X-CSRF-Token": csrf, Origin: "http://localhost:8081" },
      { cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site" },
    ];
    for (const headers of refused) {
      const res = await studiesWith(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    }
    // a POST by cookie without the token writes nothing
    const post = await t.app.request("/v1/studies", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ key: "csrf-study" }),
    });
    expect(post.status).toBe(403);
    // another site's page cannot read who is signed in either
    expect(
      (await t.app.request("/console/oidc/session", { headers: { cookie, Origin: "https://evil.example" } })).status,
    ).toBe(403);
    // an altered cookie signs nobody in
    const altered = cookie.replace(/=(.)/, (_, first: string) => `=${first === "A" ? "B" : "A"}`);
    expect((await studiesWith({ cookie: altered, "X-CSRF-Token": csrf })).status).toBe(401);
    expect((await sessionOf(altered)).status).toBe(401);
  });

  it("keeps the token paste: a header wins over the cookie, and without either nothing is signed in", async () => {
    const { cookie } = await signIn("cy");
    const admin = await managementToken(t, "operator", true);
    const res = await studiesWith({ Authorization: `Bearer ${admin}`, cookie });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { studies: unknown[] }).studies.length).toBeGreaterThanOrEqual(2);
    const stranger = await managementToken(t, "stranger");
    const asStranger = await studiesWith({ Authorization: `Bearer ${stranger}`, cookie });
    expect(((await asStranger.json()) as { studies: unknown[] }).studies).toEqual([]);
    expect((await studiesWith({})).status).toBe(401);
    expect((await sessionOf("")).status).toBe(401);
  });

  it("makes an admin from the configured claim and value, re-read at every sign-in", async () => {
    const { cookie } = await signIn("grace");
    const { body } = await sessionOf(cookie);
    expect(body).toMatchObject({ displayName: "Grace Tester", isAdmin: true });
    const res = await studiesWith({ cookie, "X-CSRF-Token": body.csrfToken as string });
    expect(((await res.json()) as { studies: unknown[] }).studies.length).toBeGreaterThanOrEqual(2);
  });

  it("refuses a callback whose state is not the browser's attempt: 400, nothing written", async () => {
    const sessions = await consoleSessionCount();
    const users = (await t.database.db.select().from(managementUsers)).length;
    const { attempt, callback } = await throughProvider("mallory");
    const url = new URL(callback, ORIGIN);
    url.searchParams.set("state", "not-the-state");
    const res = await callbackWith(url.pathname + url.search, attempt);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "state does not match this browser's sign-in attempt" });
    expect(cookieOf(res, SESSION_COOKIE)).toBeUndefined();
    expect(await consoleSessionCount()).toBe(sessions);
    expect((await t.database.db.select().from(managementUsers)).length).toBe(users);
  });

  it("refuses a replayed callback, a callback without the attempt cookie, and one with the provider's error", async () => {
    const { attempt, callback } = await throughProvider("dora");
    expect((await callbackWith(callback, attempt)).status).toBe(303);
    const sessions = await consoleSessionCount();
    // the same answer again, with the same attempt cookie (copied) …
    const replay = await callbackWith(callback, attempt);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toMatch(/used already/);
    // … and without it, as the browser has it after the first
    const noCookie = await callbackWith(callback);
    expect(noCookie.status).toBe(400);
    expect(((await noCookie.json()) as { error: string }).error).toMatch(/^no sign-in attempt in this browser/);
    const denied = await startLogin();
    const state = new URL(denied.authorizationUrl).searchParams.get("state")!;
    const refused = await callbackWith(
      `/console/oidc/callback?error=access_denied&error_description=${encodeURIComponent("the person said no")}&state=${state}`,
      denied.attempt,
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: "the provider refused the sign-in: access_denied (the person said no)",
    });
    const tampered = await callbackWith(callback, `${ATTEMPT_COOKIE}=AAAA${attempt.split("=")[1]!.slice(4)}`);
    expect(tampered.status).toBe(400);
    expect(((await tampered.json()) as { error: string }).error).toMatch(/cookie is not valid/);
    expect(await consoleSessionCount()).toBe(sessions);
  });

  it("refuses a code the provider does not know and an ID token with another nonce", async () => {
    const sessions = await consoleSessionCount();
    const bad = await startLogin();
    const state = new URL(bad.authorizationUrl).searchParams.get("state")!;
    const badCode = await callbackWith(
      `/console/oidc/callback?code=made-up&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
      bad.attempt,
    );
    expect(badCode.status).toBe(400);
    expect(((await badCode.json()) as { error: string }).error).toMatch(
      /^the provider refused the authorization code: invalid_grant/,
    );

    // An attempt sealed as the API seals it, whose nonce is not the one the provider was asked to put in the ID token.
    const box = SecretBox.fromBase64(t.config.MANAGEMENT_SECRETS_KEY!);
    const codeVerifier = randomPKCECodeVerifier();
    const forged = {
      state: "state-of-a-forged-attempt-0123456789",
      nonce: "the-nonce-the-api-expects-0123456789",
      codeVerifier,
      returnTo: "",
      startedAt: Math.floor(Date.now() / 1000),
    };
    const attempt = `${ATTEMPT_COOKIE}=${box.seal(JSON.stringify(forged), "console-oidc-attempt").toString("base64url")}`;
    const authorize = new URL(`${provider.issuer}/auth`);
    for (const [name, value] of Object.entries({
      client_id: CLIENT_ID,
      response_type: "code",
      scope: "openid email",
      redirect_uri: REDIRECT_URI,
      state: forged.state,
      nonce: "another-nonce-0123456789",
      code_challenge: await calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
    })) {
      authorize.searchParams.set(name, value);
    }
    const back = new URL(await walkProvider(provider, authorize.href, "nina"));
    const nonce = await callbackWith(back.pathname + back.search, attempt);
    expect(nonce.status).toBe(400);
    expect(((await nonce.json()) as { error: string }).error).toMatch(/nonce/);
    expect(await consoleSessionCount()).toBe(sessions);
  });

  it("refuses an attempt older than ten minutes", async () => {
    const { attempt, callback } = await throughProvider("olga");
    t.setNow(Date.now() + 11 * 60_000);
    try {
      const res = await callbackWith(callback, attempt);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/expired/);
    } finally {
      t.setNow(Date.now());
    }
  });

  it("answers 401 once the session has expired", async () => {
    const { cookie } = await signIn("eve");
    const { body } = await sessionOf(cookie);
    const headers = { cookie, "X-CSRF-Token": body.csrfToken as string };
    expect((await studiesWith(headers)).status).toBe(200);
    t.setNow(Date.now() + (t.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS + 60) * 1000);
    try {
      const res = await studiesWith(headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "session ended: sign in again" });
      const answer = await t.app.request("/console/oidc/session", { headers: { cookie } });
      expect(answer.status).toBe(401);
      expect(cookieOf(answer, SESSION_COOKIE)?.attributes["max-age"]).toBe("0");
    } finally {
      t.setNow(Date.now());
    }
  });

  it("signs out with the CSRF token: the session ends, the cookie goes, the cookie signs in nothing after", async () => {
    const { cookie } = await signIn("fay");
    const { body } = await sessionOf(cookie);
    const csrf = body.csrfToken as string;
    const signOut = (headers: Record<string, string>) =>
      t.app.request("/console/oidc/sign-out", { method: "POST", headers });
    expect((await signOut({ cookie })).status).toBe(403);
    expect((await signOut({ cookie, "X-CSRF-Token": csrf, Origin: "https://evil.example" })).status).toBe(403);
    expect((await signOut({ "X-CSRF-Token": csrf })).status).toBe(401);
    const res = await signOut({ cookie, "X-CSRF-Token": csrf, Origin: ORIGIN });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ signedOut: true });
    expect(cookieOf(res, SESSION_COOKIE)).toMatchObject({ value: "", attributes: { "max-age": "0", path: "/" } });
    const [session] = await t.database.db
      .select()
      .from(managementSessions)
      .where(eq(managementSessions.userId, body.subject as string));
    expect(session!.expiresAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(session!.renewTokenEnc).toBeNull();
    expect((await studiesWith({ cookie, "X-CSRF-Token": csrf })).status).toBe(401);
    expect((await sessionOf(cookie)).status).toBe(401);
    const audit = await t.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.actor, body.subject as string));
    expect(audit.map((entry) => entry.action)).toEqual(["session.signin", "session.signout"]);
  });
});
