import { describe, expect, it } from "vitest";
import { ConfigError } from "@studyflow/config";
import { loadConfig } from "../src/config";

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
