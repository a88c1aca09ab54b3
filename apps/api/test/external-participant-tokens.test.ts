import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { SignJWT, exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "@studyflow/config";
import { profiles, users } from "@studyflow/db";
import { loadConfig } from "../src/config";
import { bearer, onEvent, call, str, participantUser, postJson, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

// A real OpenID provider (oidc-provider) on localhost: tokens come from its authorization code
// flow, its development login and consent pages driven by HTTP as a browser would, and the token
// endpoint. Its ID token (aud = the client id, sub = the account) is the participant's token.

const CLIENT = { id: "studyflow-app", secret: "studyflow-app-secret-0123456789" };
const OTHER_CLIENT = { id: "another-app", secret: "another-app-secret-0123456789" };
const REDIRECT_URI = "https://app.example.org/callback";

interface RunningProvider {
  issuer: string;
  server: Server;
}

async function startProvider(signingKeys: JWK[]): Promise<RunningProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [CLIENT, OTHER_CLIENT].map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    })),
    jwks: { keys: signingKeys },
    // accounts named by their login; "unverified-…" ones have an address the provider does not vouch for
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.org`, email_verified: !id.startsWith("unverified-") }),
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // the scope's claims in the ID token itself, not only at the userinfo endpoint
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => false },
    cookies: { keys: ["oidc-test-cookie-key-0123456789"] },
    // explicit lifetimes (the provider's defaults are the same, but log a notice when used)
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600 },
  });
  server.on("request", provider.callback());
  return { issuer, server };
}

/** Signs `account` in at the provider as `client` and returns the ID token the token endpoint issues. */
async function idTokenFrom(provider: RunningProvider, account: string, client = CLIENT): Promise<string> {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    const res = await fetch(new URL(url, provider.issuer), {
      method: init.method ?? "GET",
      redirect: "manual",
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        ...(init.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const pair = cookie.split(";")[0]!;
      const at = pair.indexOf("=");
      const value = pair.slice(at + 1);
      if (value === "") cookies.delete(pair.slice(0, at));
      else cookies.set(pair.slice(0, at), value);
    }
    await res.arrayBuffer();
    return res;
  };
  const authorize = new URLSearchParams({
    client_id: client.id,
    response_type: "code",
    scope: "openid email",
    redirect_uri: REDIRECT_URI,
    state: "state-1",
    nonce: "nonce-1",
  });
  let location = (await go(`/auth?${authorize.toString()}`)).headers.get("location");
  // login, then consent: each is an interaction page whose form posts `prompt`
  for (let step = 0; step < 10 && location && !location.startsWith(REDIRECT_URI); step++) {
    const interaction = /^(?:https?:\/\/[^/]+)?\/interaction\/([^/?]+)/.exec(location);
    if (interaction) {
      const page = await fetch(new URL(location, provider.issuer), {
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
      });
      const prompt = /name="prompt" value="(\w+)"/.exec(await page.text())?.[1] ?? "login";
      const form: Record<string, string> =
        prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
      location = (await go(`/interaction/${interaction[1]}`, { method: "POST", form })).headers.get("location");
    } else {
      location = (await go(location)).headers.get("location");
    }
  }
  const code = location ? new URL(location).searchParams.get("code") : null;
  if (!code) throw new Error(`no authorization code (ended at ${location})`);
  const token = await fetch(`${provider.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: client.id,
      client_secret: client.secret,
    }).toString(),
  });
  const body = (await token.json()) as { id_token?: string; error?: string };
  if (!body.id_token) throw new Error(`token endpoint: ${JSON.stringify(body)}`);
  return body.id_token;
}

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("participant tokens of an external OpenID provider", () => {
  let provider: RunningProvider;
  /** Another provider, signing with the same keys: only its issuer differs. */
  let impostor: RunningProvider;
  let t: TestApp;
  let pinnedToEs256: TestApp;
  let signingKeys: JWK[];

  beforeAll(async () => {
    const rsa = await generateKeyPair("RS256", { extractable: true });
    signingKeys = [{ ...(await exportJWK(rsa.privateKey)), kid: "rsa-1", alg: "RS256", use: "sig" }];
    provider = await startProvider(signingKeys);
    impostor = await startProvider(signingKeys);
    // JWKS found through the issuer's discovery document
    t = await createTestApp({
      env: { PARTICIPANT_OIDC_ISSUER: provider.issuer, PARTICIPANT_OIDC_AUDIENCE: CLIENT.id },
    });
    // the JWKS named, and only ES256 accepted: the provider's RS256 tokens are refused
    pinnedToEs256 = await createTestApp({
      env: {
        PARTICIPANT_OIDC_ISSUER: provider.issuer,
        PARTICIPANT_OIDC_AUDIENCE: CLIENT.id,
        PARTICIPANT_OIDC_JWKS_URL: `${provider.issuer}/jwks`,
        PARTICIPANT_OIDC_ALGORITHMS: "ES256",
      },
    });
    await setupStudy(t, { key: "study-a", rules: [onEvent("ENTER", call("INIT_REPORT", str("entered")))] });
  });
  afterAll(async () => {
    await t.close();
    await pinnedToEs256.close();
    for (const running of [provider, impostor]) running.server.close();
  });

  const externalUsers = (db: TestApp["database"]["db"], subject: string) =>
    db
      .select()
      .from(users)
      .where(and(eq(users.externalIssuer, provider.issuer), eq(users.externalSubject, subject)));

  async function enter(app: TestApp, token: string, profileID: string) {
    return postJson(app, "/v1/study-service/events/study-a/enter", { profileID }, token);
  }

  it("a valid token: the user is created once, with a main profile and the verified address, and routes work", async () => {
    const token = await idTokenFrom(provider, "alice");
    // first use, twice at once: one user
    const first = await Promise.all([1, 2, 3].map(() => enter(t, token, "not-a-profile")));
    expect(first.map((res) => res.status)).toEqual([403, 403, 403]); // signed in; the profile is not hers
    const [alice, ...more] = await externalUsers(t.database.db, "alice");
    expect(more).toHaveLength(0);
    expect(alice).toMatchObject({ email: "alice@example.org", externalIssuer: provider.issuer });
    expect(alice!.accountConfirmedAt).toBeInstanceOf(Date);
    expect(alice!.passwordHash).toMatch(/^\$argon2id\$/);
    const own = await t.database.db.select().from(profiles).where(eq(profiles.userId, alice!.id));
    // case-backend's main profile: the blurred address, consent at creation
    expect(own).toMatchObject([{ mainProfile: true, alias: "a****@example.org", avatarId: "default" }]);
    expect(own[0]!.consentConfirmedAt).toEqual(alice!.accountConfirmedAt);

    const entered = await enter(t, token, own[0]!.id);
    expect(entered.status).toBe(200);
    expect(await entered.json()).toMatchObject({ created: true });
    // a new token of the same account is the same user
    const again = await enter(t, await idTokenFrom(provider, "alice"), own[0]!.id);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ created: false });
    expect(await externalUsers(t.database.db, "alice")).toHaveLength(1);
  });

  it("two first requests of a new account with different tokens at once make one user", async () => {
    const [one, two] = await Promise.all([idTokenFrom(provider, "bob"), idTokenFrom(provider, "bob")]);
    const answers = await Promise.all([one, two, one, two].map((token) => enter(t, token, "x")));
    expect(answers.map((res) => res.status)).toEqual([403, 403, 403, 403]);
    const bob = await externalUsers(t.database.db, "bob");
    expect(bob).toHaveLength(1);
    expect(await t.database.db.select().from(profiles).where(eq(profiles.userId, bob[0]!.id))).toHaveLength(1);
  });

  it("an address the provider does not vouch for, or another account's, is not the account's address", async () => {
    await enter(t, await idTokenFrom(provider, "unverified-carol"), "x");
    const [carol] = await externalUsers(t.database.db, "unverified-carol");
    expect(carol!.email).toMatch(/^external-[0-9a-f]{40}@external\.invalid$/);
    expect(carol!.accountConfirmedAt).toBeNull();

    const local = await participantUser(t, ["main"], "dave@example.org");
    await enter(t, await idTokenFrom(provider, "dave"), "x");
    const [dave] = await externalUsers(t.database.db, "dave");
    expect(dave!.id).not.toBe(local.user.id);
    expect(dave!.email).toMatch(/@external\.invalid$/);
    const [untouched] = await t.database.db.select().from(users).where(eq(users.id, local.user.id));
    expect(untouched).toMatchObject({ email: "dave@example.org", externalIssuer: null });
  });

  it("401: another audience, another issuer, an algorithm not pinned, an expired token", async () => {
    const refused = async (app: TestApp, token: string, message: string) => {
      const res = await enter(app, token, "x");
      expect(res.status, message).toBe(401);
      expect(await res.json()).toEqual({ error: message });
    };
    await refused(t, await idTokenFrom(provider, "erin", OTHER_CLIENT), "token aud not accepted");
    await refused(t, await idTokenFrom(impostor, "erin"), "token iss not accepted");
    await refused(pinnedToEs256, await idTokenFrom(provider, "erin"), "token algorithm not accepted");
    expect(await externalUsers(t.database.db, "erin")).toHaveLength(0);

    const token = await idTokenFrom(provider, "frank");
    expect((await enter(t, token, "x")).status).toBe(403); // valid now
    t.setNow(Date.now() + 2 * 3_600_000); // the provider's ID tokens live an hour
    try {
      await refused(t, token, "token expired");
    } finally {
      t.setNow(Date.now());
    }
  });

  it("401: an HS256 token (even with the provider's claims) and an unsigned (`none`) token", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: provider.issuer, aud: CLIENT.id, sub: "mallory", iat: now, exp: now + 600 };
    // HMAC with the client secret (what an alg-confusion attack would use) and with studyflow's own key
    for (const secret of [CLIENT.secret, t.config.PARTICIPANT_JWT_SECRET]) {
      const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(Buffer.from(secret));
      const res = await enter(t, hs256, "x");
      expect(res.status).toBe(401);
    }
    const unsigned = `${b64url({ alg: "none", typ: "JWT" })}.${b64url(claims)}.`;
    const res = await enter(t, unsigned, "x");
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "token algorithm not accepted" });
    // RS256 with the provider's claims but a key the provider does not publish
    const stranger = await generateKeyPair("RS256");
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
      .sign(stranger.privateKey);
    expect((await enter(t, forged, "x")).status).toBe(401);
    expect(await externalUsers(t.database.db, "mallory")).toHaveLength(0);
  });

  it("studyflow's own participant tokens keep working beside the provider's", async () => {
    const local = await participantUser(t);
    const res = await t.app.request("/v1/study-service/events/study-a/enter", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer(local.token) },
      body: JSON.stringify({ profileID: local.profiles[0]!.id }),
    });
    expect(res.status).toBe(200);
  });

  it("configuration: an issuer without an audience (or the reverse) and a symmetric algorithm refuse to start", () => {
    const base = { DATABASE_URL: "postgres://u:p@localhost/db", REDIS_URL: "redis://localhost:6379" };
    expect(() => loadConfig({ ...base, PARTICIPANT_OIDC_ISSUER: "https://id.example.org" })).toThrow(
      /PARTICIPANT_OIDC_AUDIENCE: is required when an external participant token provider is configured/,
    );
    expect(() => loadConfig({ ...base, PARTICIPANT_OIDC_AUDIENCE: "app" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, PARTICIPANT_OIDC_JWKS_URL: "https://id.example.org/jwks" })).toThrow(
      /PARTICIPANT_OIDC_ISSUER: is required/,
    );
    expect(() =>
      loadConfig({
        ...base,
        PARTICIPANT_OIDC_ISSUER: "https://id.example.org",
        PARTICIPANT_OIDC_AUDIENCE: "app",
        PARTICIPANT_OIDC_ALGORITHMS: "RS256,HS256",
      }),
    ).toThrow(/PARTICIPANT_OIDC_ALGORITHMS/);
    const config = loadConfig({
      ...base,
      PARTICIPANT_OIDC_ISSUER: "https://id.example.org",
      PARTICIPANT_OIDC_AUDIENCE: "app",
    });
    expect(config.PARTICIPANT_OIDC_ALGORITHMS).toEqual(["RS256", "ES256"]);
    expect(loadConfig(base).PARTICIPANT_OIDC_ISSUER).toBeUndefined();
  });
});
