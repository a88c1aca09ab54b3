import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantPermission } from "@studyflow/domain/study-setup";
import { loadConfig } from "../src/config";
import { bearer, managementToken, postJson, setupStudy } from "./fixtures";
import { configErrorOf, createTestApp, type TestApp } from "./test-app";

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

const ISSUER = "https://idp.example.org/realms/research";
const AUDIENCE = "studyflow-api";
/** Admin only: any caller without the admin right gets 403 here, whatever its permissions. */
const ADMIN_ROUTE = "/v1/participant-users/deletions";
/** Needs `update-study-props` on the study, or admin. */
const STUDY_ROUTE = "/v1/studies/study-a/track-account";

/**
 * Management tokens from an identity provider: verified against its JWKS (served here on loopback)
 * with the configured issuer, audience and algorithms; admin only through the configured claim.
 */
describe("management tokens from an identity provider (MANAGEMENT_JWKS_URL)", () => {
  let server: ReturnType<typeof serve>;
  let jwksUrl: string;
  let rsaKey: PrivateKey;
  let ecKey: PrivateKey;
  /** No admin claim configured. */
  let plain: TestApp;
  /** Admin: `groups` holds "studyflow-admins". */
  let byGroups: TestApp;
  /** Admin: `realm_access.roles` (nested) holds "admin". */
  let byNestedRoles: TestApp;

  beforeAll(async () => {
    const rsa = await generateKeyPair("RS256");
    const ec = await generateKeyPair("ES256");
    rsaKey = rsa.privateKey;
    ecKey = ec.privateKey;
    const keys = [
      { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" },
      { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" },
    ];
    const jwks = new Hono().get("/jwks.json", (c) => c.json({ keys }));
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: jwks.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
    });
    jwksUrl = `http://127.0.0.1:${port}/jwks.json`;
    const provider = {
      MANAGEMENT_JWKS_URL: jwksUrl,
      MANAGEMENT_OIDC_ISSUER: ISSUER,
      MANAGEMENT_OIDC_AUDIENCE: AUDIENCE,
    };
    [plain, byGroups, byNestedRoles] = await Promise.all([
      createTestApp({ env: provider }),
      createTestApp({
        env: {
          ...provider,
          MANAGEMENT_OIDC_ADMIN_CLAIM: "groups",
          MANAGEMENT_OIDC_ADMIN_VALUE: "studyflow-admins",
        },
      }),
      createTestApp({
        env: { ...provider, MANAGEMENT_OIDC_ADMIN_CLAIM: "realm_access.roles", MANAGEMENT_OIDC_ADMIN_VALUE: "admin" },
      }),
    ]);
    for (const t of [plain, byGroups, byNestedRoles]) {
      await setupStudy(t, { key: "study-a" });
      await grantPermission(t.database.db, "idp-researcher", "study-a", "update-study-props");
    }
  });
  afterAll(async () => {
    await Promise.all([plain, byGroups, byNestedRoles].map((t) => t?.close()));
    server.close();
  });

  interface TokenOptions {
    key?: PrivateKey;
    alg?: "RS256" | "ES256";
    kid?: string;
    subject?: string;
    issuer?: string;
    audience?: string | string[];
    /** false: no `exp` at all. */
    expiresIn?: string | false;
  }

  const providerToken = (claims: Record<string, unknown> = {}, options: TokenOptions = {}) => {
    const alg = options.alg ?? "RS256";
    let jwt = new SignJWT(claims)
      .setProtectedHeader({ alg, kid: options.kid ?? (alg === "RS256" ? "rsa-1" : "ec-1") })
      .setSubject(options.subject ?? "idp-user")
      .setIssuer(options.issuer ?? ISSUER)
      .setAudience(options.audience ?? AUDIENCE)
      .setIssuedAt();
    if (options.expiresIn !== false) jwt = jwt.setExpirationTime(options.expiresIn ?? "5m");
    return jwt.sign(options.key ?? (alg === "RS256" ? rsaKey : ecKey));
  };

  const getAs = (t: TestApp, path: string, token: string) => t.app.request(path, { headers: bearer(token) });
  const putStudy = (t: TestApp, token: string) => postJson(t, STUDY_ROUTE, { trackAccount: true }, token, "PUT");
  const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

  it("accepts the provider's RS256 and ES256 tokens for this issuer and audience, with the subject's permissions", async () => {
    const rs = await putStudy(plain, await providerToken({}, { subject: "idp-researcher" }));
    expect(rs.status).toBe(200);
    const es = await putStudy(plain, await providerToken({}, { subject: "idp-researcher", alg: "ES256" }));
    expect(es.status).toBe(200);
    // An audience list that includes this API's is this API's too.
    const listed = await putStudy(
      plain,
      await providerToken({}, { subject: "idp-researcher", audience: ["other-app", AUDIENCE] }),
    );
    expect(listed.status).toBe(200);
    // A subject without the permission: valid token, no right.
    const stranger = await putStudy(plain, await providerToken({}, { subject: "someone-else" }));
    expect(stranger.status).toBe(403);
  });

  it("refuses a token for another audience or from another issuer (401)", async () => {
    const otherAudience = await putStudy(
      plain,
      await providerToken({}, { subject: "idp-researcher", audience: "another-app" }),
    );
    expect(otherAudience.status).toBe(401);
    expect(await errorOf(otherAudience)).toBe("token aud not accepted");
    const otherIssuer = await putStudy(
      plain,
      await providerToken({}, { subject: "idp-researcher", issuer: "https://idp.example.org/realms/other" }),
    );
    expect(otherIssuer.status).toBe(401);
    expect(await errorOf(otherIssuer)).toBe("token iss not accepted");
    // Even an admin of the configured claim gets nothing with a token meant for another app.
    const adminElsewhere = await getAs(
      byGroups,
      ADMIN_ROUTE,
      await providerToken({ groups: ["studyflow-admins"] }, { audience: "another-app" }),
    );
    expect(adminElsewhere.status).toBe(401);
  });

  it("refuses a token signed by another key, an expired one, one without exp, and an unpinned algorithm (401)", async () => {
    const { privateKey: stranger } = await generateKeyPair("RS256");
    const forged = await putStudy(plain, await providerToken({}, { subject: "idp-researcher", key: stranger }));
    expect(forged.status).toBe(401);
    const expired = await putStudy(plain, await providerToken({}, { subject: "idp-researcher", expiresIn: "-5m" }));
    expect(expired.status).toBe(401);
    expect(await errorOf(expired)).toBe("token expired");
    const eternal = await putStudy(plain, await providerToken({}, { subject: "idp-researcher", expiresIn: false }));
    expect(eternal.status).toBe(401);
    // ES384 is not among the accepted algorithms (RS256, ES256 by default).
    const { privateKey: es384 } = await generateKeyPair("ES384");
    const unpinned = await putStudy(
      plain,
      await new SignJWT({})
        .setProtectedHeader({ alg: "ES384", kid: "ec-1" })
        .setSubject("idp-researcher")
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime("5m")
        .sign(es384),
    );
    expect(unpinned.status).toBe(401);
    expect(await errorOf(unpinned)).toBe("token algorithm not accepted");
    // No signature at all.
    const claims = { sub: "idp-researcher", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 };
    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
    const unsigned = await putStudy(plain, `${encode({ alg: "none" })}.${encode(claims)}.`);
    expect(unsigned.status).toBe(401);
  });

  it("without a configured admin claim, `admin: true` of a provider token grants nothing", async () => {
    const token = await providerToken({ admin: true, groups: ["studyflow-admins"] });
    const adminRoute = await getAs(plain, ADMIN_ROUTE, token);
    expect(adminRoute.status).toBe(403);
    // Nor does it open a study the subject has no permission on.
    expect((await putStudy(plain, token)).status).toBe(403);
  });

  it("makes an admin of a token whose configured array claim holds the value, and of no other", async () => {
    const member = await getAs(byGroups, ADMIN_ROUTE, await providerToken({ groups: ["staff", "studyflow-admins"] }));
    expect(member.status).toBe(200);
    // An admin may change any study without a permission of its own.
    expect((await putStudy(byGroups, await providerToken({ groups: ["studyflow-admins"] }))).status).toBe(200);
    const notMember = await getAs(byGroups, ADMIN_ROUTE, await providerToken({ groups: ["staff"] }));
    expect(notMember.status).toBe(403);
    const adminFlag = await getAs(byGroups, ADMIN_ROUTE, await providerToken({ admin: true }));
    expect(adminFlag.status).toBe(403);
    // Close is not equal: no prefix, case or substring matches.
    for (const groups of [
      ["studyflow-admins-2"],
      ["Studyflow-Admins"],
      "studyflow-admins,staff",
      { studyflow: true },
    ]) {
      const res = await getAs(byGroups, ADMIN_ROUTE, await providerToken({ groups }));
      expect(res.status, JSON.stringify(groups)).toBe(403);
    }
  });

  it("a string claim makes an admin when equal to the value", async () => {
    const equal = await getAs(byGroups, ADMIN_ROUTE, await providerToken({ groups: "studyflow-admins" }));
    expect(equal.status).toBe(200);
  });

  it("follows a dotted path into nested claims (Keycloak's realm_access.roles)", async () => {
    const nested = await getAs(
      byNestedRoles,
      ADMIN_ROUTE,
      await providerToken({ realm_access: { roles: ["offline_access", "admin"] } }),
    );
    expect(nested.status).toBe(200);
    const otherRole = await getAs(
      byNestedRoles,
      ADMIN_ROUTE,
      await providerToken({ realm_access: { roles: ["offline_access"] } }),
    );
    expect(otherRole.status).toBe(403);
    // The same roles under another client's key are not the realm's.
    const elsewhere = await getAs(
      byNestedRoles,
      ADMIN_ROUTE,
      await providerToken({ resource_access: { roles: ["admin"] }, admin: true }),
    );
    expect(elsewhere.status).toBe(403);
  });

  it("studyflow's own HS256 tokens keep their admin flag beside a provider", async () => {
    for (const t of [plain, byGroups]) {
      expect((await getAs(t, ADMIN_ROUTE, await managementToken(t, "ops-admin", true))).status).toBe(200);
      expect((await getAs(t, ADMIN_ROUTE, await managementToken(t, "ops-user", false))).status).toBe(403);
    }
  });
});

describe("management token provider configuration", () => {
  const jwks = { MANAGEMENT_JWKS_URL: "https://idp.example.org/jwks.json" };

  it("refuses a JWKS URL without the issuer and audience its tokens must carry", () => {
    const message = configErrorOf(jwks);
    expect(message).toContain("MANAGEMENT_OIDC_ISSUER: is required when MANAGEMENT_JWKS_URL is set");
    expect(message).toContain("MANAGEMENT_OIDC_AUDIENCE: is required when MANAGEMENT_JWKS_URL is set");
    const audienceOnly = configErrorOf({ ...jwks, MANAGEMENT_OIDC_AUDIENCE: AUDIENCE });
    expect(audienceOnly).toContain("MANAGEMENT_OIDC_ISSUER: is required");
    expect(audienceOnly).not.toContain("MANAGEMENT_OIDC_AUDIENCE");
    // Also in production, where nothing else defaults.
    expect(
      configErrorOf({
        ...jwks,
        NODE_ENV: "production",
        MANAGEMENT_JWT_SECRET: "m".repeat(40),
        PARTICIPANT_JWT_SECRET: "p".repeat(40),
        MANAGEMENT_OIDC_ISSUER: ISSUER,
      }),
    ).toContain("MANAGEMENT_OIDC_AUDIENCE: is required when MANAGEMENT_JWKS_URL is set");
  });

  it("accepts the three together, with RS256 and ES256 by default and no admin claim", () => {
    const config = loadConfig({ ...jwks, MANAGEMENT_OIDC_ISSUER: ISSUER, MANAGEMENT_OIDC_AUDIENCE: AUDIENCE });
    expect(config.MANAGEMENT_OIDC_ALGORITHMS).toEqual(["RS256", "ES256"]);
    expect(config.MANAGEMENT_OIDC_ADMIN_CLAIM).toBeUndefined();
    expect(
      loadConfig({
        ...jwks,
        MANAGEMENT_OIDC_ISSUER: ISSUER,
        MANAGEMENT_OIDC_AUDIENCE: AUDIENCE,
        MANAGEMENT_OIDC_ALGORITHMS: "ES384, EdDSA",
      }).MANAGEMENT_OIDC_ALGORITHMS,
    ).toEqual(["ES384", "EdDSA"]);
  });

  it("takes the admin claim and its value together only", () => {
    const complete = { ...jwks, MANAGEMENT_OIDC_ISSUER: ISSUER, MANAGEMENT_OIDC_AUDIENCE: AUDIENCE };
    expect(configErrorOf({ ...complete, MANAGEMENT_OIDC_ADMIN_CLAIM: "groups" })).toContain(
      "MANAGEMENT_OIDC_ADMIN_VALUE: is required when MANAGEMENT_OIDC_ADMIN_CLAIM is set",
    );
    expect(configErrorOf({ ...complete, MANAGEMENT_OIDC_ADMIN_VALUE: "admins" })).toContain(
      "MANAGEMENT_OIDC_ADMIN_CLAIM: is required when MANAGEMENT_OIDC_ADMIN_VALUE is set",
    );
    expect(() =>
      loadConfig({ ...complete, MANAGEMENT_OIDC_ADMIN_CLAIM: "groups", MANAGEMENT_OIDC_ADMIN_VALUE: "admins" }),
    ).not.toThrow();
  });

  it("refuses provider settings without a JWKS URL, a symmetric or unknown algorithm, and a non-URL issuer", () => {
    expect(configErrorOf({ MANAGEMENT_OIDC_ISSUER: ISSUER })).toContain(
      "MANAGEMENT_OIDC_ISSUER: is used only with MANAGEMENT_JWKS_URL",
    );
    expect(configErrorOf({ MANAGEMENT_OIDC_ADMIN_CLAIM: "groups", MANAGEMENT_OIDC_ADMIN_VALUE: "x" })).toContain(
      "MANAGEMENT_OIDC_ADMIN_CLAIM: is used only with MANAGEMENT_JWKS_URL",
    );
    const complete = { ...jwks, MANAGEMENT_OIDC_ISSUER: ISSUER, MANAGEMENT_OIDC_AUDIENCE: AUDIENCE };
    expect(configErrorOf({ ...complete, MANAGEMENT_OIDC_ALGORITHMS: "HS256" })).toContain("MANAGEMENT_OIDC_ALGORITHMS");
    expect(configErrorOf({ ...complete, MANAGEMENT_OIDC_ALGORITHMS: "none" })).toContain("MANAGEMENT_OIDC_ALGORITHMS");
    expect(configErrorOf({ ...complete, MANAGEMENT_OIDC_ISSUER: "research-realm" })).toContain(
      "MANAGEMENT_OIDC_ISSUER",
    );
  });
});
