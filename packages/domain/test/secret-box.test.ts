import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretBox, SecretUnreadable, parseSecretKey, secretKeyId } from "@studyflow/domain/access";

const key = () => randomBytes(32);

describe("SecretBox", () => {
  it("opens what it sealed, for the same context, with a fresh IV each time", () => {
    const box = new SecretBox(key());
    const first = box.seal("refresh-token-ä", "management-session:1");
    const second = box.seal("refresh-token-ä", "management-session:1");
    expect(first.equals(second)).toBe(false);
    expect(first.includes(Buffer.from("refresh-token"))).toBe(false);
    expect(box.open(first, "management-session:1")).toBe("refresh-token-ä");
    expect(box.open(new Uint8Array(second), "management-session:1")).toBe("refresh-token-ä");
    expect(box.seal("", "c").length).toBe(37);
    expect(box.open(box.seal("", "c"), "c")).toBe("");
  });

  it("refuses another context, altered bytes, truncated bytes and another key", () => {
    const box = new SecretBox(key());
    const sealed = box.seal("secret", "api-key:a");
    expect(() => box.open(sealed, "api-key:b")).toThrow(SecretUnreadable);
    for (const index of [0, 1, 12, 25, 40, sealed.length - 1]) {
      const altered = Buffer.from(sealed);
      altered[index] = (altered[index] ?? 0) ^ 1;
      expect(() => box.open(altered, "api-key:a")).toThrow(SecretUnreadable);
    }
    expect(() => box.open(sealed.subarray(0, 36), "api-key:a")).toThrow(/not a sealed value/);
    expect(() => new SecretBox(key()).open(sealed, "api-key:a")).toThrow(/not configured/);
  });

  it("opens values of a previous key after a rotation and says which to seal again", () => {
    const oldKey = key();
    const newKey = key();
    const sealedOld = new SecretBox(oldKey).seal("old", "c");
    const rotated = new SecretBox(newKey, [oldKey]);
    expect(rotated.keyId).toBe(secretKeyId(newKey));
    expect(rotated.keyIdOf(sealedOld)).toBe(secretKeyId(oldKey));
    expect(rotated.open(sealedOld, "c")).toBe("old");
    expect(rotated.needsResealing(sealedOld)).toBe(true);
    const resealed = rotated.seal(rotated.open(sealedOld, "c"), "c");
    expect(rotated.needsResealing(resealed)).toBe(false);
    expect(() => new SecretBox(oldKey).open(resealed, "c")).toThrow(SecretUnreadable);
    expect(rotated.keyIdOf(Buffer.from("short"))).toBeUndefined();
  });

  it("takes keys as base64 (standard or URL-safe) of exactly 32 bytes", () => {
    const raw = key();
    expect(parseSecretKey(raw.toString("base64")).equals(raw)).toBe(true);
    expect(parseSecretKey(` ${raw.toString("base64url")} `).equals(raw)).toBe(true);
    expect(() => parseSecretKey(randomBytes(16).toString("base64"))).toThrow(/32 bytes/);
    expect(() => parseSecretKey("not base64 at all!")).toThrow(/must be base64/);
    expect(() => new SecretBox(randomBytes(31))).toThrow(/32 bytes/);
    const box = SecretBox.fromBase64(raw.toString("base64"), [key().toString("base64")]);
    expect(box.open(new SecretBox(raw).seal("x", "c"), "c")).toBe("x");
    expect(secretKeyId(raw)).toMatch(/^[0-9a-f]{16}$/);
  });
});
