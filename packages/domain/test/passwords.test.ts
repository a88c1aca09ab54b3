import { readFileSync } from "node:fs";
import { hash as argon2Hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import {
  PASSWORD_RULE_MESSAGE,
  PASSWORD_TOO_COMMON_MESSAGE,
  checkPasswordRule,
  hashPassword,
  passwordHashNeedsUpgrade,
  verifyPassword,
} from "../src/accounts/passwords";

describe("password rule", () => {
  it("states the rule in its message", () => {
    expect(PASSWORD_RULE_MESSAGE).toBe(
      "password must be 12–512 bytes and contain at least 3 of: lowercase letter, uppercase letter, digit, symbol",
    );
    expect(checkPasswordRule("short")).toBe(PASSWORD_RULE_MESSAGE);
  });

  it("accepts any 3 of the 4 classes", () => {
    expect(checkPasswordRule("harbourLights7")).toBeNull(); // lower, upper, digit
    expect(checkPasswordRule("harbour lights 7")).toBeNull(); // lower, symbol (space), digit
    expect(checkPasswordRule("Harbour-Lights")).toBeNull(); // lower, upper, symbol
    expect(checkPasswordRule("HARBOUR-LIGHT7")).toBeNull(); // upper, symbol, digit
  });

  it("refuses two classes however long", () => {
    expect(checkPasswordRule("harbourlightsandfoghorns")).toBe(PASSWORD_RULE_MESSAGE);
    expect(checkPasswordRule("harbourlights1234567")).toBe(PASSWORD_RULE_MESSAGE);
    expect(checkPasswordRule("HarbourLightsAndFog")).toBe(PASSWORD_RULE_MESSAGE);
  });

  it("counts bytes, not characters, at the lower bound", () => {
    expect(checkPasswordRule("Tb4!kq9#Lm2")).toBe(PASSWORD_RULE_MESSAGE); // 11 bytes
    expect(checkPasswordRule("Tb4!kq9#Lm2x")).toBeNull(); // 12 bytes
    // 10 characters but 16 bytes: each of Ä ä Ö ö Ü ü takes two bytes in UTF-8.
    const umlauts = "ÄäÖöÜüaB12";
    expect(umlauts.length).toBe(10);
    expect(Buffer.byteLength(umlauts)).toBe(16);
    expect(checkPasswordRule(umlauts)).toBeNull();
    // Two characters, eight bytes: still too short.
    expect(checkPasswordRule("😀😀")).toBe(PASSWORD_RULE_MESSAGE);
  });

  it("counts bytes, not characters, at the upper bound", () => {
    const atLimit = "aB1" + "x".repeat(509);
    expect(Buffer.byteLength(atLimit)).toBe(512);
    expect(checkPasswordRule(atLimit)).toBeNull();
    expect(checkPasswordRule(atLimit + "x")).toBe(PASSWORD_RULE_MESSAGE);
    // 173 characters, but € is three bytes: 3 + 170 × 3 = 513 bytes.
    const euros = "aB1" + "€".repeat(170);
    expect(euros.length).toBe(173);
    expect(checkPasswordRule(euros)).toBe(PASSWORD_RULE_MESSAGE);
    expect(checkPasswordRule("aB1" + "€".repeat(169))).toBeNull();
  });

  it("does not count the underscore as a symbol", () => {
    expect(checkPasswordRule("harbour_lights_1")).toBe(PASSWORD_RULE_MESSAGE); // lower, digit
    expect(checkPasswordRule("Harbour_Lights_")).toBe(PASSWORD_RULE_MESSAGE); // lower, upper
    expect(checkPasswordRule("harbour-lights-1")).toBeNull(); // the hyphen is one
  });

  it("counts non-ASCII characters as symbols, and only ASCII letters as letters", () => {
    expect(checkPasswordRule("harbourlichté1")).toBeNull(); // lower, digit, é as symbol
    // Ü and ö are neither ASCII upper nor lower case: only the symbol class and the digit.
    expect(checkPasswordRule("ÜÖÄÜÖÄÜÖ1234")).toBe(PASSWORD_RULE_MESSAGE);
  });

  it("refuses common passwords whatever their case", () => {
    for (const pw of ["Password123!", "Welcome2024!", "Qwerty123456!", "pASSWORD123!", "WELCOME2024!"]) {
      expect(checkPasswordRule(pw), pw).toBe(PASSWORD_TOO_COMMON_MESSAGE);
    }
    expect(PASSWORD_TOO_COMMON_MESSAGE).toBe("password is too common");
  });

  it("bundles a few hundred common passwords, each one that the rule alone would let through", () => {
    const entries = readFileSync(new URL("../src/accounts/common-passwords.txt", import.meta.url), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    expect(entries.length).toBeGreaterThanOrEqual(300);
    for (const entry of entries) expect(checkPasswordRule(entry), entry).toBe(PASSWORD_TOO_COMMON_MESSAGE);
  });
});

describe("password hashing", () => {
  it("uses argon2id with explicit parameters and a random salt", async () => {
    const first = await hashPassword("Harbour-Lights-7");
    const second = await hashPassword("Harbour-Lights-7");
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(second).not.toBe(first);
  });

  it("verifies the right password and refuses others", async () => {
    const encoded = await hashPassword("Harbour-Lights-7 ünïcode");
    await expect(verifyPassword(encoded, "Harbour-Lights-7 ünïcode")).resolves.toBe(true);
    await expect(verifyPassword(encoded, "Harbour-Lights-7 unicode")).resolves.toBe(false);
    await expect(verifyPassword(encoded, "")).resolves.toBe(false);
  });

  it("tells when a stored hash is weaker than today's parameters", async () => {
    expect(passwordHashNeedsUpgrade(await hashPassword("Harbour-Lights-7"))).toBe(false);
    const weak = await argon2Hash("Harbour-Lights-7", { memoryCost: 4096, timeCost: 1, parallelism: 1 });
    expect(passwordHashNeedsUpgrade(weak)).toBe(true);
    await expect(verifyPassword(weak, "Harbour-Lights-7")).resolves.toBe(true);
  });
});
