import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** Management tokens from an identity provider: RS256 verified against its JWKS (served here on loopback). */
describe("management tokens from a JWKS", () => {
  let t: TestApp;
  let server: ReturnType<typeof serve>;
  type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  let providerKey: PrivateKey;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair("RS256");
    providerKey = privateKey;
    const jwk = { ...(await exportJWK(publicKey)), kid: "provider-1", alg: "RS256", use: "sig" };
    const jwks = new Hono().get("/jwks.json", (c) => c.json({ keys: [jwk] }));
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: jwks.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
    });
    t = await createTestApp({ env: { MANAGEMENT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json` } });
    await setupStudy(t, { key: "study-a" });
  });
  afterAll(async () => {
    await t.close();
    server.close();
  });

  const providerToken = (key: PrivateKey, claims: Record<string, unknown> = { admin: true }) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "provider-1" })
      .setSubject("idp-user")
      .setExpirationTime("5m")
      .sign(key);

  it("accepts an RS256 token signed by the provider", async () => {
    const res = await postJson(
      t,
      "/v1/studies/study-a/track-account",
      { trackAccount: true },
      await providerToken(providerKey),
      "PUT",
    );
    expect(res.status).toBe(200);
  });

  it("refuses a token signed by another key, and one without the admin right gets 403", async () => {
    const { privateKey: stranger } = await generateKeyPair("RS256");
    const forged = await postJson(
      t,
      "/v1/studies/study-a/track-account",
      { trackAccount: true },
      await providerToken(stranger),
      "PUT",
    );
    expect(forged.status).toBe(401);
    const plain = await postJson(
      t,
      "/v1/studies/study-a/track-account",
      {},
      await providerToken(providerKey, {}),
      "PUT",
    );
    expect(plain.status).toBe(403);
  });
});
