import { readFileSync } from "node:fs";
import { hash as argon2Hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import {
  PASSWORD_IS_SEQUENCE_MESSAGE,
  PASSWORD_REPEATS_CHARACTER_MESSAGE,
  PASSWORD_REPEATS_PATTERN_MESSAGE,
  PASSWORD_RULE_DESCRIPTION,
  PASSWORD_HASH_PARAMETERS,
  PASSWORD_TOO_COMMON_MESSAGE,
  PASSWORD_TOO_LONG_MESSAGE,
  PASSWORD_TOO_SHORT_MESSAGE,
  checkPasswordRule,
  hashPassword,
  passwordHashNeedsUpgrade,
  verifyPassword,
} from "../src/participant-accounts/passwords";

/** Words in an order that never repeats, cut to `bytes` (ASCII): long and not predictable. */
function passphrase(bytes: number): string {
  const words = ["harbour", "lantern", "velvet", "orchard", "glacier", "tumble", "saffron", "meadow", "quill"];
  const parts: string[] = [];
  for (let i = 0; parts.join(" ").length < bytes; i++) parts.push(words[(i * 4 + Math.floor(i / 9)) % words.length]!);
  return parts.join(" ").slice(0, bytes);
}

/** `count` different CJK characters (three bytes each in UTF-8), no two neighbours in any order. */
const threeByteCharacters = (count: number) =>
  Array.from({ length: count }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 2919) % 5000))).join("");

describe("password policy (NIST SP 800-63B: length, blocklist, no repetition or sequences, no composition rules)", () => {
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
    const atLimit = passphrase(512);
    expect(Buffer.byteLength(atLimit)).toBe(512);
    expect(checkPasswordRule(atLimit)).toBeNull();
    expect(checkPasswordRule(atLimit + "x")).toBe(PASSWORD_TOO_LONG_MESSAGE);
    // 171 characters, but each of these is three bytes: 513 bytes.
    expect(checkPasswordRule(threeByteCharacters(171))).toBe(PASSWORD_TOO_LONG_MESSAGE);
    expect(checkPasswordRule(threeByteCharacters(170))).toBeNull();
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

  it("refuses one repeated character, as the whole password or nearly all of it", () => {
    for (const pw of [
      "aaaaaaaaaaaaaaaaaaaa",
      "ZZZZZZZZZZ",
      "........",
      "😀😀😀😀😀😀😀😀",
      "aaaaaaaaaa1!",
      "aaaaaaaa1234",
    ]) {
      expect(checkPasswordRule(pw), pw).toBe(PASSWORD_REPEATS_CHARACTER_MESSAGE);
    }
    expect(PASSWORD_REPEATS_CHARACTER_MESSAGE).toMatch(/^password repeats one character/);
  });

  it("refuses a short block repeated, and any block when the password is nothing else", () => {
    for (const pw of [
      "abcabcabcabc",
      "xyzxyzxyzxyz",
      "1212121212",
      "4747474747",
      "abababab!",
      "harbourharbour",
      "Abc1Abc1Abc1",
    ]) {
      expect(checkPasswordRule(pw), pw).toBe(PASSWORD_REPEATS_PATTERN_MESSAGE);
    }
    expect(PASSWORD_REPEATS_PATTERN_MESSAGE).toMatch(/^password repeats a short pattern/);
  });

  it("refuses ascending and descending sequences of digits, letters and keyboard keys", () => {
    for (const pw of [
      "123456789012", // the number row: 0 follows 9
      "0987654321",
      "34567890",
      "hgfedcba",
      "mnopqrstuv",
      "ZYXWVUTS",
      "Qwertyuiop!", // a keyboard row and one character more
      "qwertzuiop", // German layout
      "azertyuiop", // French layout
      "asdfghjkl;",
      "poiuytrewq",
      "!@#$%^&*",
      "abcdefg123456", // two runs cover it all
      "Xk9123456", // three characters beside the run: nearly all of it
    ]) {
      expect(checkPasswordRule(pw), pw).toBe(PASSWORD_IS_SEQUENCE_MESSAGE);
    }
    expect(PASSWORD_IS_SEQUENCE_MESSAGE).toMatch(/^password is a sequence/);
  });

  it("still accepts passwords that merely contain a run, with enough of their own beside it", () => {
    for (const pw of [
      "Xk9#1234", // four characters beside the run
      "harbour12345678",
      "x".repeat(64) + "harbour",
      "lighthouse abc keeper",
      "mississippi river",
      "banana-split-sundae",
      "correct horse battery staple",
      "90817263",
      "k7#Qp2!zW",
      "Old-harbour-lights-1",
    ]) {
      expect(checkPasswordRule(pw), pw).toBeNull();
    }
  });

  it("describes the rule in plain language, naming each kind of refusal", () => {
    expect(PASSWORD_RULE_DESCRIPTION).toContain("at least 8 characters");
    for (const example of ["aaaaaaaa", "abcabcabc", "12345678", "qwertyuiop", "leaked"]) {
      expect(PASSWORD_RULE_DESCRIPTION).toContain(example);
    }
    expect(PASSWORD_RULE_DESCRIPTION).not.toMatch(/must (contain|include)/);
  });

  it("ships a blocklist of a few thousand entries, each long enough to need it, with its source stated", () => {
    const text = readFileSync(new URL("../src/participant-accounts/common-passwords.txt", import.meta.url), "utf8");
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

  it("reads today's parameters from the hash's text, and any other hash's with the full parse", async () => {
    const current = await hashPassword("Harbour-Lights-7");
    expect(current).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[^$]+\$[A-Za-z0-9+/]{43}$/);
    expect(passwordHashNeedsUpgrade(current)).toBe(false);
    // a longer digest shares today's prefix; the others differ in it
    for (const other of [
      await argon2Hash("Harbour-Lights-7", { ...PASSWORD_HASH_PARAMETERS, outputLen: 64 }),
      await argon2Hash("Harbour-Lights-7", { ...PASSWORD_HASH_PARAMETERS, memoryCost: 65_536, timeCost: 4 }),
      await argon2Hash("Harbour-Lights-7", { ...PASSWORD_HASH_PARAMETERS, algorithm: 1 }),
    ]) {
      expect(passwordHashNeedsUpgrade(other)).toBe(true);
    }
  });
});
