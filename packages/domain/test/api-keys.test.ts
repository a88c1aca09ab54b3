import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, auditLog } from "@studyflow/db";
import {
  ApiKeyRejected,
  apiKeyStatus,
  createApiKey,
  hashApiKey,
  listApiKeys,
  revokeApiKey,
  verifyApiKey,
} from "@studyflow/domain/access";
import { Conflict, Invalid, NotFound } from "@studyflow/domain/errors";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const DAY_MS = 86_400_000;
const T0 = new Date("2026-03-01T12:00:00Z");
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

describe("service account API keys", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  const create = (subject: string, extra: Partial<Parameters<typeof createApiKey>[1]> = {}) =>
    createApiKey(database.db, { subject, createdBy: "operator", now: T0, ...extra });

  const rowOf = async (id: string) => (await database.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0];

  async function rejection(work: Promise<unknown>): Promise<ApiKeyRejected> {
    const error = await work.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ApiKeyRejected);
    return error as ApiKeyRejected;
  }

  it("creates a key that verifies as its subject, with a 90-day default lifetime", async () => {
    const { key, apiKey } = await create("svc-export", { label: "nightly export" });
    expect(key).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toMatchObject({ subject: "svc-export", label: "nightly export", createdBy: "operator" });
    expect(apiKey.expiresAt).toEqual(at(90 * DAY_MS));
    expect(key.startsWith(apiKey.keyPrefix)).toBe(true);
    expect(apiKey).not.toHaveProperty("keyHash");
    expect(await verifyApiKey(database.db, key, at(DAY_MS))).toEqual({
      subject: "svc-export",
      keyId: apiKey.id,
      serviceAccountId: null,
    });
  });

  it("stores only the SHA-256 of the key and a short prefix; the audit entry holds no key", async () => {
    const { key, apiKey } = await create("svc-hash");
    const row = await rowOf(apiKey.id);
    expect(row?.keyHash).toBe(hashApiKey(key));
    expect(row?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.keyHash).not.toContain(key.slice(3));
    expect(row?.keyPrefix).toHaveLength(11);
    const [audit] = await database.db.select().from(auditLog).where(eq(auditLog.target, apiKey.id));
    expect(audit).toMatchObject({ studyKey: null, actor: "operator", action: "service-key.create" });
    expect(JSON.stringify(audit?.details)).not.toContain(key);
    expect(JSON.stringify(audit?.details)).not.toContain(row?.keyHash);
  });

  it("refuses an expired key (at and after its expiry), and says so", async () => {
    const { key } = await create("svc-expiring", { expiresInDays: 1 });
    await expect(verifyApiKey(database.db, key, at(DAY_MS - 1))).resolves.toMatchObject({ subject: "svc-expiring" });
    for (const now of [at(DAY_MS), at(30 * DAY_MS)]) {
      const error = await rejection(verifyApiKey(database.db, key, now));
      expect(error.reason).toBe("expired");
      expect(error.message).toBe("expired api key");
      expect(error.kind).toBe("unauthorized");
    }
  });

  it("refuses a revoked key, records the revocation and refuses a second one", async () => {
    const { key, apiKey } = await create("svc-revoked");
    const revoked = await revokeApiKey(database.db, apiKey.id, "alice", at(1_000));
    expect(revoked.revokedAt).toEqual(at(1_000));
    expect((await rejection(verifyApiKey(database.db, key, at(2_000)))).message).toBe("revoked api key");
    await expect(revokeApiKey(database.db, apiKey.id, "alice", at(3_000))).rejects.toThrow(Conflict);
    expect((await rowOf(apiKey.id))?.revokedAt).toEqual(at(1_000));
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.target, apiKey.id));
    expect(audit.map((entry) => [entry.action, entry.actor])).toEqual([
      ["service-key.create", "operator"],
      ["service-key.revoke", "alice"],
    ]);
  });

  it("refuses unknown and malformed keys alike", async () => {
    const { key } = await create("svc-known");
    const unknown = `sf_${"A".repeat(43)}`;
    const cases = [unknown, `${key}x`, key.slice(0, -1), key.toUpperCase(), "", "Bearer " + key, key.slice(3)];
    for (const candidate of cases) {
      expect((await rejection(verifyApiKey(database.db, candidate, at(1_000)))).message).toBe("invalid api key");
    }
  });

  it("writes last_used_at on first use, then at most once a minute", async () => {
    const { key, apiKey } = await create("svc-busy");
    expect((await rowOf(apiKey.id))?.lastUsedAt).toBeNull();
    await verifyApiKey(database.db, key, at(10_000));
    expect((await rowOf(apiKey.id))?.lastUsedAt).toEqual(at(10_000));
    await verifyApiKey(database.db, key, at(40_000));
    await verifyApiKey(database.db, key, at(69_999));
    expect((await rowOf(apiKey.id))?.lastUsedAt).toEqual(at(10_000));
    await verifyApiKey(database.db, key, at(70_001));
    expect((await rowOf(apiKey.id))?.lastUsedAt).toEqual(at(70_001));
  });

  it("checks lifetime, subject and label", async () => {
    const cases: [Partial<Parameters<typeof createApiKey>[1]>, RegExp][] = [
      [{ expiresInDays: 0 }, /from 1 to 400/],
      [{ expiresInDays: 401 }, /from 1 to 400/],
      [{ expiresInDays: 1.5 }, /whole number/],
      [{ expiresAt: at(-1) }, /in the future/],
      [{ expiresAt: at(401 * DAY_MS) }, /at most 400 days/],
      [{ expiresAt: at(DAY_MS), expiresInDays: 1 }, /not both/],
      [{ subject: "  " }, /subject must not be empty/],
      [{ label: "x".repeat(201) }, /label is longer than 200/],
    ];
    for (const [input, message] of cases) {
      const work = create("svc-checked", input);
      await expect(work).rejects.toThrow(Invalid);
      await expect(work).rejects.toThrow(message);
    }
    expect(await listApiKeys(database.db, { subject: "svc-checked" })).toEqual([]);
    const { apiKey } = await create("svc-checked", { expiresAt: at(400 * DAY_MS) });
    expect(apiKey.expiresAt).toEqual(at(400 * DAY_MS));
  });

  it("lists keys without secrets, by subject, with their status", async () => {
    const first = await create("svc-listed", { label: "one" });
    const second = await createApiKey(database.db, {
      subject: "svc-listed",
      label: "two",
      createdBy: "operator",
      now: at(1_000),
      expiresInDays: 1,
    });
    await revokeApiKey(database.db, first.apiKey.id, "operator", at(2_000));
    const listed = await listApiKeys(database.db, { subject: "svc-listed" });
    expect(listed.map((key) => key.label)).toEqual(["two", "one"]);
    for (const key of listed) expect(Object.keys(key)).not.toContain("keyHash");
    expect(JSON.stringify(listed)).not.toContain(first.key);
    expect(listed.map((key) => apiKeyStatus(key, at(2 * DAY_MS)))).toEqual(["expired", "revoked"]);
    expect(apiKeyStatus(second.apiKey, at(3_000))).toBe("active");
    expect((await listApiKeys(database.db)).length).toBeGreaterThan(2);
  });

  it("revoking an unknown or malformed id is NotFound", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      await expect(revokeApiKey(database.db, id, "operator", new Date())).rejects.toThrow(NotFound);
    }
  });
});
