import { readFileSync } from "node:fs";
import { hash as argon2Hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import {
  PASSWORD_TOO_COMMON_MESSAGE,
  PASSWORD_TOO_LONG_MESSAGE,
  PASSWORD_TOO_SHORT_MESSAGE,
  checkPasswordRule,
  hashPassword,
  passwordHashNeedsUpgrade,
  verifyPassword,
} from "../src/accounts/passwords";

describe("password policy (NIST SP 800-63B: length and blocklist, no composition rules)", () => {
  it("names the field and the bound in its messages", () => {
    expect(PASSWORD_TOO_SHORT_MESSAGE).toBe("password must be at least 8 characters long");
    expect(PASSWORD_TOO_LONG_MESSAGE).toBe("password must be at most 512 bytes long (UTF-8)");
    expect(checkPasswordRule("short")).toBe(PASSWORD_TOO_SHORT_MESSAGE);
  });

  it("asks for no character classes: one class is enough when long and uncommon", () => {
    expect(checkPasswordRule("harbourlightsandfoghorns")).toBeNull(); // lower only
    expect(checkPasswordRule("HARBOURLIGHTS")).toBeNull(); // upper only
    expect(checkPasswordRule("90817263")).toBeNull(); // digits only, not a common one
    expect(checkPasswordRule("correct horse battery staple")).toBeNull(); // a passphrase with spaces
  });

  it("counts characters (code points) at the lower bound", () => {
    expect(checkPasswordRule("tbkqxlm")).toBe(PASSWORD_TOO_SHORT_MESSAGE); // 7
    expect(checkPasswordRule("tbkqxlmw")).toBeNull(); // 8
    // 7 characters but 10 bytes (ä, ö, ü are two bytes each): too short all the same.
    expect(checkPasswordRule("äöüxqzw")).toBe(PASSWORD_TOO_SHORT_MESSAGE);
    // 8 emoji are 16 UTF-16 units and 32 bytes, and 8 characters: long enough.
    expect(checkPasswordRule("😀🌊🚲🎻🧭🪁🦉🍉")).toBeNull();
    expect(checkPasswordRule("😀😀😀😀")).toBe(PASSWORD_TOO_SHORT_MESSAGE); // 8 UTF-16 units, 4 characters
  });

  it("allows 64 characters and more; caps at 512 bytes", () => {
    expect(checkPasswordRule("x".repeat(64) + "harbour")).toBeNull();
    const atLimit = "aB1" + "x".repeat(509);
    expect(Buffer.byteLength(atLimit)).toBe(512);
    expect(checkPasswordRule(atLimit)).toBeNull();
    expect(checkPasswordRule(atLimit + "x")).toBe(PASSWORD_TOO_LONG_MESSAGE);
    // 171 characters, but € is three bytes: 513 bytes.
    expect(checkPasswordRule("€".repeat(171))).toBe(PASSWORD_TOO_LONG_MESSAGE);
    expect(checkPasswordRule("€".repeat(170))).toBeNull();
  });

  it("refuses common and leaked passwords whatever their case", () => {
    for (const pw of [
      "password",
      "PASSWORD",
      "12345678",
      "iloveyou",
      "sunshine",
      "trustno1",
      "Password123!",
      "Welcome2024!",
      "Qwerty123456!",
      "pASSWORD123!",
    ]) {
      expect(checkPasswordRule(pw), pw).toBe(PASSWORD_TOO_COMMON_MESSAGE);
    }
  });

  it("ships a blocklist of a few thousand entries, each long enough to need it, with its source stated", () => {
    const text = readFileSync(new URL("../src/accounts/common-passwords.txt", import.meta.url), "utf8");
    expect(text).toMatch(/SecLists/);
    const entries = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    expect(entries.length).toBeGreaterThanOrEqual(2_000);
    for (const entry of entries) {
      expect([...entry].length, entry).toBeGreaterThanOrEqual(8);
      expect(checkPasswordRule(entry), entry).toBe(PASSWORD_TOO_COMMON_MESSAGE);
    }
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
