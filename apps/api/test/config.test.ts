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
      expect(message).toContain("PORT:");
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
});
