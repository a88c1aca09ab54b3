import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, users } from "@studyflow/db";
import { STRONG_PASSWORD, bearer, managementToken, participantUser } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("/v1/participant-users: operators' tools (admin only)", () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await managementToken(t, "ops-admin", true);
  });
  afterAll(async () => {
    await t.close();
  });

  const req = (method: string, path: string, token?: string) =>
    t.app.request(`/v1/participant-users${path}`, { method, headers: token ? bearer(token) : {} });

  it("finds an account by e-mail (any case), with its state and no hash", async () => {
    const user = await participantUser(t, ["main", "kid"], "Find.Me@example.org".toLowerCase());
    const res = await req("GET", `?email=${encodeURIComponent(" FIND.me@example.org ")}`, admin);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { account: Record<string, unknown> };
    expect(body.account).toMatchObject({
      id: user.user.id,
      email: "find.me@example.org",
      lockedAt: null,
      profileCount: 2,
      deletion: null,
    });
    expect(JSON.stringify(body)).not.toMatch(/argon2|passwordHash|tokenVersion/);
    expect((await req("GET", "?email=nobody@example.org", admin)).status).toBe(404);
    expect((await req("GET", "", admin)).status).toBe(400);
  });

  it("lock ends the sessions and tokens; unlock lets the account back in; both audited", async () => {
    const user = await participantUser(t);
    expect((await t.app.request("/v1/user", { method: "DELETE", headers: bearer(user.token) })).status).toBe(401);
    const locked = await req("POST", `/${user.user.id}/lock`, admin);
    expect(locked.status).toBe(200);
    expect(((await locked.json()) as { account: { lockedAt: string | null } }).account.lockedAt).not.toBeNull();
    // the old token is dead (its version moved on)
    const deleting = await t.app.request("/v1/user", {
      method: "DELETE",
      headers: { ...bearer(user.token), "content-type": "text/plain" },
      body: JSON.stringify({ password: STRONG_PASSWORD }),
    });
    expect(deleting.status).toBe(401);
    const unlocked = await req("POST", `/${user.user.id}/unlock`, admin);
    expect(unlocked.status).toBe(200);
    expect(((await unlocked.json()) as { account: { lockedAt: string | null } }).account.lockedAt).toBeNull();
    const actions = await t.database.db.select().from(auditLog).where(eq(auditLog.target, user.user.id));
    expect(actions.map((entry) => [entry.action, entry.actor])).toEqual(
      expect.arrayContaining([
        ["participant-user.lock", "ops-admin"],
        ["participant-user.unlock", "ops-admin"],
      ]),
    );
  });

  it("sign-out bumps the token version; delete queues the deletion and shows its progress", async () => {
    const user = await participantUser(t);
    const signedOut = await req("POST", `/${user.user.id}/sign-out`, admin);
    expect(signedOut.status).toBe(200);
    expect(await signedOut.json()).toEqual({ sessionsEnded: 0 });
    const [row] = await t.database.db.select().from(users).where(eq(users.id, user.user.id));
    expect(row?.tokenVersion).toBe(user.user.tokenVersion + 1);

    const deleted = await req("DELETE", `/${user.user.id}`, admin);
    expect(deleted.status).toBe(202);
    const { deletion } = (await deleted.json()) as { deletion: { id: string; status: string; userId: string } };
    expect(deletion).toMatchObject({ status: "pending", userId: user.user.id });
    const again = (await (await req("DELETE", `/${user.user.id}`, admin)).json()) as { deletion: { id: string } };
    expect(again.deletion.id).toBe(deletion.id);
    const progress = await req("GET", `/deletions/${deletion.id}`, admin);
    expect(progress.status).toBe(200);
    expect(await progress.json()).toMatchObject({
      deletion: { id: deletion.id, participantsDone: 0, participantsTotal: 0 },
    });
    const list = (await (await req("GET", "/deletions", admin)).json()) as { deletions: { id: string }[] };
    expect(list.deletions.map((entry) => entry.id)).toContain(deletion.id);
    expect((await req("POST", `/${user.user.id}/unlock`, admin)).status).toBe(409);
    const found = (await (await req("GET", `/${user.user.id}`, admin)).json()) as {
      account: { deletion: { status: string } };
    };
    expect(found.account.deletion.status).toBe("pending");
  });

  it("404 for unknown and malformed ids", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-an-id"]) {
      expect((await req("POST", `/${id}/lock`, admin)).status).toBe(404);
      expect((await req("DELETE", `/${id}`, admin)).status).toBe(404);
    }
    expect((await req("GET", "/deletions/not-a-uuid", admin)).status).toBe(400);
  });

  it("401 without a token or with a participant token; 403 for a management token that is not admin", async () => {
    const user = await participantUser(t);
    const researcher = await managementToken(t, "researcher", false);
    for (const [method, path] of [
      ["GET", "?email=x@example.org"],
      ["POST", `/${user.user.id}/lock`],
      ["POST", `/${user.user.id}/unlock`],
      ["POST", `/${user.user.id}/sign-out`],
      ["DELETE", `/${user.user.id}`],
      ["GET", "/deletions"],
    ] as const) {
      expect((await req(method, path)).status).toBe(401);
      expect((await req(method, path, user.token)).status).toBe(401);
      expect((await req(method, path, researcher)).status).toBe(403);
    }
    const [row] = await t.database.db.select().from(users).where(eq(users.id, user.user.id));
    expect(row?.lockedAt).toBeNull();
    expect(row?.deletionRequestedAt).toBeNull();
  });
});
