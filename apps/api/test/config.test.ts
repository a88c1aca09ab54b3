import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { ConfigError, DEV_MANAGEMENT_SECRETS_KEY } from "@studyflow/config";
import { SecretBox } from "@studyflow/domain/access";
import { consoleOidcEnabled, idpSignInEnabled, loadConfig } from "../src/config";

describe("loadConfig", () => {
  it("has local defaults for everything in development", () => {
    const config = loadConfig({});
    expect(config.DATABASE_URL).toBe("postgres://postgres@127.0.0.1:5432/postgres");
    expect(config.REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(config.PORT).toBe(8080);
  });

  it("names a bad variable without echoing its value", () => {
    const attempt = () => loadConfig({ PORT: "eighty", DATABASE_URL: "mysql://secret-password@x/y" });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain("PORT: must be a number");
      expect(message).not.toContain("PORT: is required");
      expect(message).toContain("DATABASE_URL: must be a postgres:// URL");
      expect(message).not.toContain("secret-password");
    }
  });

  it("requires real secrets in production", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/MANAGEMENT_JWT_SECRET: is required/);
    expect(() =>
      loadConfig({ NODE_ENV: "production", MANAGEMENT_JWT_SECRET: "short", PARTICIPANT_JWT_SECRET: "x".repeat(40) }),
    ).toThrow(/MANAGEMENT_JWT_SECRET: must be at least 32 characters/);
  });

  it("rejects an empty value instead of taking it as unset (PORT= would listen on a random port)", () => {
    expect(() => loadConfig({ PORT: "" })).toThrow(/PORT: is empty; set a value or leave the variable out/);
    expect(() => loadConfig({ SMTP_URL: " " })).not.toThrow(); // not the API's variable
    expect(() => loadConfig({ RESULT_DIR: "" })).toThrow(/RESULT_DIR: is empty/);
  });

  it("TRUST_PROXY: 0 by default, a small whole number otherwise", () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "2" }).TRUST_PROXY).toBe(2);
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow(/TRUST_PROXY: must be a number/);
  });
});

describe("management sign-in settings", () => {
  const production = {
    NODE_ENV: "production",
    MANAGEMENT_JWT_SECRET: "m".repeat(40),
    PARTICIPANT_JWT_SECRET: "p".repeat(40),
  };
  const key = () => randomBytes(32).toString("base64");
  const mtls = {
    MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "8443",
    MANAGEMENT_IDP_SIGNIN_MTLS_CA: "/etc/studyflow/ca.pem",
    MANAGEMENT_IDP_SIGNIN_MTLS_CERT: "/etc/studyflow/cert.pem",
    MANAGEMENT_IDP_SIGNIN_MTLS_KEY: "/etc/studyflow/key.pem",
  };
  const consoleProvider = {
    CONSOLE_OIDC_ISSUER: "https://id.example.org/realms/research",
    CONSOLE_OIDC_CLIENT_ID: "studyflow-console",
    CONSOLE_OIDC_REDIRECT_URI: "https://studyflow.example.org/console/oidc/callback",
  };

  it("keeps every sign-in off by default, with CASE's lifetimes and admin role and a development key", () => {
    const config = loadConfig({});
    expect(idpSignInEnabled(config)).toBe(false);
    expect(consoleOidcEnabled(config)).toBe(false);
    expect(config.MANAGEMENT_IDP_ADMIN_ROLE).toBe("ADMIN");
    expect(config.MANAGEMENT_TOKEN_TTL_SECONDS).toBe(3_600);
    expect(config.MANAGEMENT_SESSION_TTL_SECONDS).toBe(172_800);
    expect(config.MANAGEMENT_SECRETS_KEY).toBe(DEV_MANAGEMENT_SECRETS_KEY);
    expect(config.MANAGEMENT_SECRETS_PREVIOUS_KEYS).toEqual([]);
    const box = SecretBox.fromBase64(config.MANAGEMENT_SECRETS_KEY ?? "", config.MANAGEMENT_SECRETS_PREVIOUS_KEYS);
    expect(box.open(box.seal("x", "c"), "c")).toBe("x");
    expect(loadConfig(production).MANAGEMENT_SECRETS_KEY).toBeUndefined();
  });

  it("turns case-admin's sign-in on with a secret or the whole mTLS listener", () => {
    const secret = "s".repeat(32);
    expect(idpSignInEnabled(loadConfig({ MANAGEMENT_IDP_SIGNIN_SECRET: secret }))).toBe(true);
    expect(idpSignInEnabled(loadConfig(mtls))).toBe(true);
    expect(() => loadConfig({ MANAGEMENT_IDP_SIGNIN_SECRET: "short" })).toThrow(
      /MANAGEMENT_IDP_SIGNIN_SECRET: must be at least 32 characters/,
    );
    expect(() => loadConfig({ MANAGEMENT_IDP_SIGNIN_SECRET: `${secret} x` })).toThrow(/printable ASCII without spaces/);
    expect(() =>
      loadConfig({ MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "8443", MANAGEMENT_IDP_SIGNIN_MTLS_CA: "/ca.pem" }),
    ).toThrow(/MANAGEMENT_IDP_SIGNIN_MTLS_CERT: is required when any MANAGEMENT_IDP_SIGNIN_MTLS_\* is set/);
    expect(() => loadConfig({ ...mtls, MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "8080" })).toThrow(
      /MANAGEMENT_IDP_SIGNIN_MTLS_PORT: must differ from PORT and METRICS_PORT/,
    );
    expect(() => loadConfig({ ...mtls, METRICS_PORT: "8443" })).toThrow(/must differ from PORT and METRICS_PORT/);
    expect(() => loadConfig({ MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "70000" })).toThrow(/MANAGEMENT_IDP_SIGNIN_MTLS_PORT/);
    expect(() => loadConfig({ MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "-1" })).toThrow(/MANAGEMENT_IDP_SIGNIN_MTLS_PORT/);
    // 0 is any free port (as PORT 0 is), so it never collides with another 0.
    expect(
      loadConfig({ ...mtls, PORT: "0", MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "0" }).MANAGEMENT_IDP_SIGNIN_MTLS_PORT,
    ).toBe(0);
  });

  it("requires a key of sealed secrets in production once a sign-in is configured, and checks it", () => {
    expect(() => loadConfig({ ...production, MANAGEMENT_IDP_SIGNIN_SECRET: "s".repeat(32) })).toThrow(
      /MANAGEMENT_SECRETS_KEY: is required when a sign-in is configured/,
    );
    expect(() => loadConfig({ ...production, ...mtls })).toThrow(/MANAGEMENT_SECRETS_KEY: is required/);
    expect(() => loadConfig({ ...production, ...consoleProvider })).toThrow(/MANAGEMENT_SECRETS_KEY: is required/);
    const current = key();
    const config = loadConfig({ ...production, ...consoleProvider, MANAGEMENT_SECRETS_KEY: current });
    expect(consoleOidcEnabled(config)).toBe(true);
    expect(config.MANAGEMENT_SECRETS_KEY).toBe(current);
    const previous = [key(), key()];
    expect(
      loadConfig({ MANAGEMENT_SECRETS_PREVIOUS_KEYS: ` ${previous[0]} ,${previous[1]}` })
        .MANAGEMENT_SECRETS_PREVIOUS_KEYS,
    ).toEqual(previous);
    const badKey = randomBytes(16).toString("base64");
    const attempt = () => loadConfig({ MANAGEMENT_SECRETS_KEY: badKey });
    expect(attempt).toThrow(/MANAGEMENT_SECRETS_KEY: must be base64 of 32 bytes/);
    expect(attempt).not.toThrow(new RegExp(badKey.replace(/[+/=]/g, ".")));
    expect(() => loadConfig({ MANAGEMENT_SECRETS_KEY: "no base64 here!" })).toThrow(
      /MANAGEMENT_SECRETS_KEY: must be base64/,
    );
    expect(() => loadConfig({ MANAGEMENT_SECRETS_PREVIOUS_KEYS: `${key()},short` })).toThrow(
      /MANAGEMENT_SECRETS_PREVIOUS_KEYS: key 2: must be base64/,
    );
    expect(() => loadConfig({ MANAGEMENT_TOKEN_TTL_SECONDS: "10" })).toThrow(/MANAGEMENT_TOKEN_TTL_SECONDS/);
    expect(() => loadConfig({ MANAGEMENT_SESSION_TTL_SECONDS: "60" })).toThrow(/MANAGEMENT_SESSION_TTL_SECONDS/);
  });

  it("takes the console's provider whole, https in production", () => {
    expect(() => loadConfig({ CONSOLE_OIDC_ISSUER: consoleProvider.CONSOLE_OIDC_ISSUER })).toThrow(
      /CONSOLE_OIDC_CLIENT_ID: is required when the console's provider is configured/,
    );
    expect(() => loadConfig({ CONSOLE_OIDC_CLIENT_SECRET: "x" })).toThrow(/CONSOLE_OIDC_ISSUER: is required/);
    expect(() => loadConfig({ ...consoleProvider, CONSOLE_OIDC_ISSUER: "not a url" })).toThrow(/CONSOLE_OIDC_ISSUER/);
    const local = { ...consoleProvider, CONSOLE_OIDC_REDIRECT_URI: "http://localhost:8080/console/oidc/callback" };
    expect(consoleOidcEnabled(loadConfig(local))).toBe(true);
    expect(() => loadConfig({ ...production, ...local, MANAGEMENT_SECRETS_KEY: key() })).toThrow(
      /CONSOLE_OIDC_REDIRECT_URI: must be https:\/\/ in production/,
    );
    const localIssuer = { ...consoleProvider, CONSOLE_OIDC_ISSUER: "http://localhost:9000" };
    expect(consoleOidcEnabled(loadConfig(localIssuer))).toBe(true);
    expect(() => loadConfig({ ...production, ...localIssuer, MANAGEMENT_SECRETS_KEY: key() })).toThrow(
      /CONSOLE_OIDC_ISSUER: must be https:\/\/ in production/,
    );
  });

  it("asks the console's provider for openid and the configured scopes, names it, and makes admins only by claim and value", () => {
    const config = loadConfig(consoleProvider);
    expect(config.CONSOLE_OIDC_SCOPES).toEqual(["openid", "email", "profile"]);
    expect(config.CONSOLE_OIDC_PROVIDER_NAME).toBeUndefined();
    expect(config.CONSOLE_OIDC_ADMIN_CLAIM).toBeUndefined();
    expect(
      loadConfig({ ...consoleProvider, CONSOLE_OIDC_SCOPES: "email groups,offline_access" }).CONSOLE_OIDC_SCOPES,
    ).toEqual(["openid", "email", "groups", "offline_access"]);
    expect(() => loadConfig({ ...consoleProvider, CONSOLE_OIDC_SCOPES: 'openid "quoted"' })).toThrow(
      /CONSOLE_OIDC_SCOPES/,
    );
    expect(
      loadConfig({ ...consoleProvider, CONSOLE_OIDC_PROVIDER_NAME: " Example ID " }).CONSOLE_OIDC_PROVIDER_NAME,
    ).toBe("Example ID");
    const admin = { CONSOLE_OIDC_ADMIN_CLAIM: "realm_access.roles", CONSOLE_OIDC_ADMIN_VALUE: "studyflow-admin" };
    expect(loadConfig({ ...consoleProvider, ...admin })).toMatchObject(admin);
    expect(() => loadConfig({ ...consoleProvider, CONSOLE_OIDC_ADMIN_CLAIM: "groups" })).toThrow(
      /CONSOLE_OIDC_ADMIN_VALUE: is required when CONSOLE_OIDC_ADMIN_CLAIM is set/,
    );
    expect(() => loadConfig({ ...consoleProvider, CONSOLE_OIDC_ADMIN_VALUE: "x" })).toThrow(
      /CONSOLE_OIDC_ADMIN_CLAIM: is required when CONSOLE_OIDC_ADMIN_VALUE is set/,
    );
    // the provider's other settings alone configure half a provider
    for (const name of ["CONSOLE_OIDC_SCOPES", "CONSOLE_OIDC_PROVIDER_NAME", "CONSOLE_OIDC_ADMIN_CLAIM"]) {
      expect(() => loadConfig({ [name]: "x" }), name).toThrow(/CONSOLE_OIDC_ISSUER: is required/);
    }
  });
});
