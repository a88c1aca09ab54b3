import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userAttributes, users } from "@studyflow/db";
import { MAX_USER_ATTRIBUTE_TYPES } from "@studyflow/domain/participant-accounts";
import { bearer, caseRequest, participantUser } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

interface Attributes {
  attributes: {
    id: string;
    userId: string;
    type: string;
    attributes: Record<string, unknown> | null;
    createdAt: string;
  }[];
}

describe("/v1/user/attributes: what a participant app keeps about the account (CASE's userAttributes)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
  });
  afterAll(async () => {
    await t.close();
  });

  const list = async (token: string) => {
    const res = await t.app.request("/v1/user/attributes", { headers: bearer(token) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Attributes).attributes;
  };
  const set = (token: string | undefined, body: unknown) => caseRequest(t, "POST", "/v1/user/attributes", body, token);
  const remove = (token: string | undefined, id: string) =>
    t.app.request(`/v1/user/attributes/${id}`, { method: "DELETE", headers: token ? bearer(token) : {} });

  it("creates one document per type, replaces it whole on the next write, lists them by type", async () => {
    const { user, token } = await participantUser(t);
    expect(await list(token)).toEqual([]);
    const first = await set(token, { type: "onboarding", attributes: { step: 2, seen: ["intro"] } });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ message: "user attribute set" });
    expect((await set(token, { type: "device", attributes: { platform: "ios" } })).status).toBe(200);

    const listed = await list(token);
    expect(listed.map((doc) => doc.type)).toEqual(["device", "onboarding"]);
    const onboarding = listed[1]!;
    expect(onboarding).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      userId: user.id,
      type: "onboarding",
      attributes: { step: 2, seen: ["intro"] },
      createdAt: "2026-06-01T12:00:00Z",
    });

    t.setNow(NOW + 1_500);
    expect((await set(token, { type: "onboarding", attributes: { done: true } })).status).toBe(200);
    const replaced = (await list(token)).find((doc) => doc.type === "onboarding")!;
    expect(replaced).toMatchObject({
      id: onboarding.id,
      attributes: { done: true },
      createdAt: "2026-06-01T12:00:01.5Z",
    });
    t.setNow(NOW);

    // no attributes sent: stored as null, as case-backend stores a nil map
    expect((await set(token, { type: "empty" })).status).toBe(200);
    expect((await list(token)).find((doc) => doc.type === "empty")!.attributes).toBeNull();
  });

  it("deletes one document by id", async () => {
    const { token } = await participantUser(t);
    await set(token, { type: "a", attributes: { x: 1 } });
    await set(token, { type: "b", attributes: { y: 2 } });
    const [a] = await list(token);
    const res = await remove(token, a!.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "user attribute deleted" });
    expect((await list(token)).map((doc) => doc.type)).toEqual(["b"]);
    const again = await remove(token, a!.id);
    expect(again.status).toBe(404);
    expect(await again.json()).toHaveProperty("error");
  });

  it("refuses bad input with 400 and stores nothing", async () => {
    const { token, user } = await participantUser(t);
    for (const body of [
      {},
      { type: "" },
      { type: "   ", attributes: {} },
      { type: 5, attributes: {} },
      { type: "x", attributes: "text" },
      { type: "x", attributes: [1, 2] },
      { type: "t".repeat(101), attributes: {} },
      { type: "big", attributes: { blob: "x".repeat(17 * 1024) } },
    ]) {
      const res = await set(token, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await res.json()).toHaveProperty("error");
    }
    const blank = await t.app.request("/v1/user/attributes", { method: "POST", headers: bearer(token) });
    expect(blank.status).toBe(400);
    const stored = await t.database.db.select().from(userAttributes).where(eq(userAttributes.userId, user.id));
    expect(stored).toEqual([]);
  });

  it("bounds the types an account holds: a new one beyond the bound is 409, a known one is still replaced", async () => {
    const { token } = await participantUser(t);
    for (let i = 0; i < MAX_USER_ATTRIBUTE_TYPES; i += 1) {
      expect((await set(token, { type: `type-${String(i).padStart(2, "0")}`, attributes: { i } })).status).toBe(200);
    }
    const refused = await set(token, { type: "one-more", attributes: {} });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toHaveProperty("error");
    expect((await set(token, { type: "type-00", attributes: { i: "again" } })).status).toBe(200);
    expect(await list(token)).toHaveLength(MAX_USER_ATTRIBUTE_TYPES);
  });

  it("refuses every operation without a token or with a revoked one (401)", async () => {
    const { token } = await participantUser(t);
    await set(token, { type: "kept", attributes: { v: 1 } });
    const [kept] = await list(token);
    expect((await t.app.request("/v1/user/attributes")).status).toBe(401);
    expect((await set(undefined, { type: "x", attributes: {} })).status).toBe(401);
    expect((await remove(undefined, kept!.id)).status).toBe(401);

    const signedIn = await participantUser(t);
    expect((await t.app.request("/v1/auth/token/revoke", { headers: bearer(signedIn.token) })).status).toBe(200);
    expect((await t.app.request("/v1/user/attributes", { headers: bearer(signedIn.token) })).status).toBe(401);
    expect((await set(signedIn.token, { type: "x", attributes: {} })).status).toBe(401);
    expect((await remove(signedIn.token, kept!.id)).status).toBe(401);
    expect(await list(token)).toHaveLength(1);
  });

  it("keeps accounts apart: another account's documents are neither listed nor deleted (404)", async () => {
    const owner = await participantUser(t);
    const other = await participantUser(t);
    await set(owner.token, { type: "private", attributes: { secret: "owner's" } });
    const [owned] = await list(owner.token);
    expect(await list(other.token)).toEqual([]);
    const refused = await remove(other.token, owned!.id);
    expect(refused.status).toBe(404);
    expect(await list(owner.token)).toHaveLength(1);
    // the same type in another account is a document of its own
    await set(other.token, { type: "private", attributes: { secret: "other's" } });
    expect((await list(owner.token))[0]!.attributes).toEqual({ secret: "owner's" });
  });

  it("goes with the account when the account is deleted", async () => {
    const { token, user } = await participantUser(t);
    await set(token, { type: "gone", attributes: {} });
    await t.database.db.delete(users).where(eq(users.id, user.id));
    const stored = await t.database.db.select().from(userAttributes).where(eq(userAttributes.userId, user.id));
    expect(stored).toEqual([]);
  });
});
